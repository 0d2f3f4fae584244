"""Import OpenInference traces (Arize Phoenix; OTLP with ``openinference.span.kind``) as tracekit traces.

Names from the OpenInference semantic conventions (Arize-ai/openinference, ``spec/semantic_conventions.md``,
and ``openinference-semantic-conventions``):

- ``LLM`` spans are model calls: ``llm.input_messages.N.message.{role, content, contents.M.message_content.
  {type, text, image.image.url}, tool_calls.M.tool_call.{id, function.name, function.arguments}, tool_call_id,
  name}``, the same under ``llm.output_messages``, ``llm.model_name``, ``llm.provider`` / ``llm.system``,
  ``llm.token_count.{prompt, completion, prompt_details.cache_read, prompt_details.cache_write}`` (the
  prompt count includes cache reads; tracekit counts them apart), ``llm.finish_reason``;
- ``TOOL`` spans are tool executions: ``tool.name``, ``tool_call.id`` (or ``tool.id``), arguments in
  ``tool_call.function.arguments`` or ``input.value``, the result in ``output.value``;
- ``AGENT`` and ``CHAIN`` spans hold the others; ``session.id`` names the session;
- ``RETRIEVER``, ``EMBEDDING``, ``RERANKER``, ``GUARDRAIL``, ``EVALUATOR``, ``PROMPT``, ``DECISION`` and
  unknown kinds are not model or tool calls: each trace's ``meta.problems`` lists them.

Messages are OpenAI chat shaped, so ``tracekit.providers.openai`` converts them. Input is read as in
``tracekit.importers.otel``: OTLP JSON (``.json`` / ``.jsonl``) or Phoenix's span JSON, folders too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from tracekit.importers.common import ImportedTrace
from tracekit.importers.otel import stream_spans
from tracekit.importers.otel_otlp import Span, indexed
from tracekit.importers.otel_sessions import MappedSpan, ModelStep, ToolStep
from tracekit.providers import openai
from tracekit.trace import Usage, parse_json_arguments

SOURCE = "import:openinference"
KIND = "openinference.span.kind"
CONTAINERS = ("AGENT", "CHAIN")


def import_openinference(paths: Iterable[str | Path], problems: list[str]) -> list[ImportedTrace]:
    """One trace per session in the OpenInference span files of ``paths``; unreadable parts go to ``problems``."""
    return list(stream_openinference(paths, problems))


def stream_openinference(paths: Iterable[str | Path], problems: list[str]) -> Iterator[ImportedTrace]:
    """``import_openinference`` one trace at a time, each built when asked for (``otel.stream_spans``)."""
    return stream_spans(paths, problems, map_span, source=SOURCE, origin="openinference")


def map_span(span: Span) -> MappedSpan:
    """What one OpenInference span is: a model call, a tool execution, a container, or none of those."""
    attributes = span.attributes
    kind = str(attributes.get(KIND) or "").upper()
    session = attributes.get("session.id")
    mapped = MappedSpan(span, conversation_id=str(session) if session is not None else None)
    if kind == "LLM":
        mapped.step, mapped.role = model_step(span, mapped.problems), "model"
    elif kind == "TOOL":
        mapped.step, mapped.role = tool_step(span), "tool"
    elif kind in CONTAINERS:
        mapped.role = "container"
        if kind == "AGENT" and attributes.get("agent.name") is not None:
            mapped.header["agent"] = str(attributes["agent.name"])
        elif kind == "AGENT":  # a workflow span around the named agents: its name only when none is named
            mapped.header["agent_span"] = span.name
    elif kind:
        mapped.role = "unmapped"
    return mapped


def model_step(span: Span, problems: list[str]) -> ModelStep:
    """One LLM span: model, provider, usage, stop reason, error, and the messages when they were recorded."""
    attributes = span.attributes
    provider = attributes.get("llm.provider") or attributes.get("llm.system")
    model = attributes.get("llm.model_name") or attributes.get("llm.request.model_name")
    step = ModelStep(span.where, span.start_ns, span.end_ns, provider=_text(provider), model=_text(model))
    step.usage = _usage(attributes)
    if attributes.get("llm.finish_reason") is not None:
        step.stop_reason = str(attributes["llm.finish_reason"])
    if span.error:
        step.error = {"type": "error", "message": span.status_message or ""}
    inputs = [_chat_message(item) for item in indexed(attributes, "llm.input_messages")]
    outputs = [_chat_message(item) for item in indexed(attributes, "llm.output_messages")]
    if inputs:
        step.system, step.input = openai.request_conversation({"messages": inputs})
    if outputs:
        replies = outputs if len(outputs) > 1 and _is_responses_output(attributes) else outputs[:1]
        step.output = {"role": "assistant", "content": [b for r in replies for b in openai.assistant_blocks(r)]}
    if not inputs and not outputs and not span.error:
        problems.append(f"{span.where}: LLM span without llm.input_messages / llm.output_messages "
                        "(inputs and outputs hidden?)")
    return step


def _is_responses_output(attributes: dict[str, Any]) -> bool:
    """Whether the span's output is a Responses API response, whose output items the instrumentation writes
    as one message each (one reply; several chat completion messages are choices, of which the first is
    the reply)."""
    value = attributes.get("output.value")
    if not isinstance(value, str) or '"response"' not in value:
        return False
    try:
        document = orjson.loads(value)
    except orjson.JSONDecodeError:
        return False
    return isinstance(document, dict) and document.get("object") == "response"


def tool_step(span: Span) -> ToolStep:
    """One TOOL span: name, call id, arguments and result."""
    attributes = span.attributes
    name = attributes.get("tool.name") or attributes.get("tool_call.function.name") or span.name
    call_id = attributes.get("tool_call.id") or attributes.get("tool.id")
    step = ToolStep(span.where, span.start_ns, span.end_ns, str(name), _text(call_id), is_error=span.error)
    arguments = attributes.get("tool_call.function.arguments", attributes.get("input.value"))
    if arguments is not None:
        step.arguments = parse_json_arguments(arguments)[0] if isinstance(arguments, str) else arguments
    if "output.value" in attributes:
        step.result = _text(attributes["output.value"]) or ""
    return step


def _chat_message(item: dict[str, Any]) -> dict[str, Any]:
    """One flattened ``message.*`` item as an OpenAI chat message."""
    message: dict[str, Any] = {"role": item.get("message.role") or "user"}
    contents = indexed(item, "message.contents")
    if contents:
        message["content"] = [_content_part(part) for part in contents]
    else:
        message["content"] = item.get("message.content")
    calls = [
        {"id": call.get("tool_call.id"), "type": "function",
         "function": {"name": call.get("tool_call.function.name") or "",
                      "arguments": call.get("tool_call.function.arguments") or "{}"}}
        for call in indexed(item, "message.tool_calls")
    ]
    if calls:
        message["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        if item.get(f"message.{key}") is not None:
            message[key] = item[f"message.{key}"]
    return message


def _content_part(part: dict[str, Any]) -> dict[str, Any]:
    kind = part.get("message_content.type")
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": part.get("message_content.image.image.url") or ""}}
    return {"type": "text", "text": part.get("message_content.text") or ""}


def _usage(attributes: dict[str, Any]) -> Usage:
    def number(name: str) -> int | None:
        value = attributes.get(name)
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    prompt = number("llm.token_count.prompt")
    cache_read = number("llm.token_count.prompt_details.cache_read")
    return Usage(
        input_tokens=max(prompt - (cache_read or 0), 0) if prompt is not None else None,
        output_tokens=number("llm.token_count.completion"),
        cache_read_input_tokens=cache_read,
        cache_creation_input_tokens=number("llm.token_count.prompt_details.cache_write"),
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
