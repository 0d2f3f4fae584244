"""Spans of the OpenTelemetry GenAI semantic conventions as model and tool steps.

Both generations of names are read (open-telemetry/semantic-conventions, docs/gen-ai/):

- current (1.37 on): ``gen_ai.provider.name``, ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
  ``gen_ai.system_instructions`` (role + parts: ``text``, ``tool_call``, ``tool_call_response``,
  ``reasoning``, ``blob``, ``uri``, ``file``; as JSON strings or structured attributes),
  ``gen_ai.tool.definitions``, the ``gen_ai.client.inference.operation.details`` event (the same
  attributes on an event or a log record), ``execute_tool`` spans with ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``;
- up to 1.36: ``gen_ai.system``, the flattened ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``
  (role, content, tool_calls.M.{id,name,arguments}, tool_call_id, finish_reason; OpenLLMetry writes
  these), the events ``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``,
  ``gen_ai.tool.message``, ``gen_ai.choice`` (span events or log records, fields in the body or the
  attributes), and the older ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events;
  ``gen_ai.usage.prompt_tokens`` / ``completion_tokens``.

``gen_ai.usage.input_tokens`` counts cached tokens too (the conventions say so); tracekit counts them
apart, so ``gen_ai.usage.cache_read.input_tokens`` is taken out of it. Spans that tracekit's own
``export otel`` wrote carry ``tracekit.*`` attributes that restore the header exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

import orjson

from tracekit.importers.otel_otlp import Span, indexed
from tracekit.importers.otel_sessions import MappedSpan, ModelStep, ToolStep
from tracekit.providers import openai
from tracekit.trace import Content, Usage, parse_json_arguments

INFERENCE = ("chat", "text_completion", "generate_content")
CONTAINERS = ("invoke_agent", "create_agent", "invoke_workflow")
NOT_STEPS = ("embeddings", "retrieval")
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_LEGACY_ROLES = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                 "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


def map_span(span: Span) -> MappedSpan:
    """What one span is: a model call, a tool execution, an agent container, or not GenAI at all."""
    attributes = _with_details(span)
    operation = attributes.get("gen_ai.operation.name") or _operation_from_name(span.name)
    conversation = _text(attributes.get("gen_ai.conversation.id"))
    mapped = MappedSpan(span, conversation_id=conversation)
    if operation in INFERENCE or (operation is None and _legacy_model_span(attributes)):
        mapped.step, mapped.role = model_step(span, attributes, mapped.problems), "model"
    elif operation == "execute_tool":
        mapped.step, mapped.role = tool_step(span, attributes), "tool"
    elif operation in CONTAINERS:
        mapped.role = "container"
    elif operation in NOT_STEPS:
        mapped.role = "unmapped"
    elif operation is not None or any(key.startswith("gen_ai.") for key in attributes):
        mapped.role = "unknown"
    mapped.header = header_fields(attributes, conversation)
    return mapped


def header_fields(attributes: dict[str, Any], conversation: str | None) -> dict[str, Any]:
    """Session fields of a span: tracekit's own export attributes (exact), else what GenAI names."""
    fields: dict[str, Any] = {}
    if "tracekit.trace_id" in attributes:
        trace_id = str(attributes["tracekit.trace_id"])
        fields["trace_id"] = trace_id
        fields["session"] = attributes.get("tracekit.session", None if conversation == trace_id else conversation)
        for name in ("case_id", "group", "source"):
            if attributes.get(f"tracekit.{name}") is not None:
                fields[name] = str(attributes[f"tracekit.{name}"])
        if attributes.get("tracekit.repeat") is not None:
            fields["repeat"] = int(attributes["tracekit.repeat"])
        if isinstance(attributes.get("tracekit.meta"), str):
            fields["meta"] = _json(attributes["tracekit.meta"])
        if attributes.get("gen_ai.request.model") is not None:
            fields["model"] = str(attributes["gen_ai.request.model"])
        provider = attributes.get("gen_ai.provider.name")
        if provider is not None:
            fields["provider"] = None if provider == "_OTHER" else str(provider)
    if attributes.get("gen_ai.agent.name") is not None:
        fields["agent"] = str(attributes["gen_ai.agent.name"])
    return fields


def model_step(span: Span, attributes: dict[str, Any], problems: list[str]) -> ModelStep:
    """One model call: provider, model, usage, stop reason, error, and the messages when captured."""
    provider = _text(attributes.get("gen_ai.provider.name") or attributes.get("gen_ai.system"))
    step = ModelStep(span.where, span.start_ns, span.end_ns, provider=provider,
                     model=_text(attributes.get("gen_ai.request.model") or attributes.get("gen_ai.response.model")))
    step.usage = _usage(attributes)
    reasons = attributes.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, list) and reasons:
        step.stop_reason = str(reasons[0])
    elif isinstance(reasons, str):
        step.stop_reason = reasons
    error_type = attributes.get("error.type")
    status = attributes.get("http.response.status_code")
    if span.error or error_type is not None:
        step.error = {"type": str(error_type or "error"), "message": span.status_message or str(error_type or "")}
        if status is None and isinstance(error_type, str) and error_type.isdigit():
            status = int(error_type)
    step.status = int(status) if status is not None else None
    if attributes.get("gen_ai.response.id") is not None:
        step.extra["response_id"] = str(attributes["gen_ai.response.id"])
    for name in ("ttft_ms", "attempts", "partial"):
        if attributes.get(f"tracekit.{name}") is not None:
            step.extra[name] = attributes[f"tracekit.{name}"]
    if attributes.get("gen_ai.tool.definitions") is not None:
        step.extra["tool_definitions"] = _json(attributes["gen_ai.tool.definitions"])
    _read_messages(step, span, attributes, problems)
    if step.stop_reason is None and step.output is not None:
        step.stop_reason = step.output.pop("_finish_reason", None)
    elif step.output is not None:
        step.output.pop("_finish_reason", None)
    return step


def tool_step(span: Span, attributes: dict[str, Any]) -> ToolStep:
    """One tool execution: name, call id, arguments and result when captured, error, injection."""
    name = attributes.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool").strip() or "tool"
    step = ToolStep(span.where, span.start_ns, span.end_ns, str(name), _text(attributes.get("gen_ai.tool.call.id")))
    if "gen_ai.tool.call.arguments" in attributes:
        step.arguments = _arguments(attributes["gen_ai.tool.call.arguments"])
    if "gen_ai.tool.call.result" in attributes:
        step.result = _result_text(attributes["gen_ai.tool.call.result"])
    step.is_error = span.error or attributes.get("error.type") is not None
    step.injected = bool(attributes.get("tracekit.tool.injected"))
    return step


# --------------------------------------------------------------------------- messages


def _read_messages(step: ModelStep, span: Span, attributes: dict[str, Any], problems: list[str]) -> None:
    if "gen_ai.input.messages" in attributes or "gen_ai.output.messages" in attributes:
        unknown: set[str] = set()
        system = attributes.get("gen_ai.system_instructions")
        step.system = _system(_json(system), unknown) if system is not None else None
        if "gen_ai.input.messages" in attributes:
            leading, step.input = parts_conversation(_json(attributes["gen_ai.input.messages"]), step.provider,
                                                     unknown)
            step.system = step.system if step.system is not None else leading
        if "gen_ai.output.messages" in attributes:
            outputs = parts_conversation(_json(attributes["gen_ai.output.messages"]), step.provider, unknown)[1]
            step.output = _reply(outputs, _json(attributes["gen_ai.output.messages"]))
        if unknown:
            problems.append(f"{span.where}: message parts of type {', '.join(sorted(unknown))} kept as they are")
        return
    chat = _legacy_flat(attributes, "gen_ai.prompt")
    if not chat:
        chat = _event_messages(span, _LEGACY_ROLES, _legacy_message, ("gen_ai.content.prompt", "gen_ai.prompt"))
    if chat:
        step.system, step.input = openai.request_conversation({"messages": chat})
    completions = _legacy_flat(attributes, "gen_ai.completion") or _event_messages(
        span, ("gen_ai.choice",), _legacy_choice, ("gen_ai.content.completion", "gen_ai.completion"))
    if completions:
        first = completions[0]
        step.output = {"role": "assistant", "content": openai.assistant_blocks(first),
                       "_finish_reason": first.get("finish_reason")}


def parts_conversation(
    messages: Any, provider: str | None, unknown: set[str]
) -> tuple[Content | None, list[dict[str, Any]]]:
    """GenAI role/parts messages as ``(system, canonical messages)``: leading system messages become the
    system prompt, consecutive ``tool`` messages one user turn of tool results (and for Anthropic, whose
    API joins consecutive user turns, a user message right after them joins that turn too)."""
    result: list[dict[str, Any]] = []
    system: list[dict[str, Any]] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        blocks = [_part_block(part, unknown) for part in _parts(message)]
        previous = result[-1] if result else None
        if role == "system" and not result:
            system.extend(blocks)
        elif role == "system":
            result.append({"role": "system", "content": _plain(blocks)})
        elif role == "assistant":
            result.append({"role": "assistant", "content": blocks})
        elif role == "tool" and previous is not None and previous.get("_tool_results"):
            previous["content"].extend(blocks)
        elif role == "tool":
            result.append({"role": "user", "content": blocks, "_tool_results": True})
        elif provider == "anthropic" and previous is not None and previous.get("_tool_results"):
            previous["content"].extend(blocks)
            previous["_tool_results"] = False
        else:
            result.append({"role": "user", "content": _plain(blocks)})
    for message in result:
        message.pop("_tool_results", None)
    return (_plain(system) if system else None), result


def _reply(outputs: list[dict[str, Any]], raw: Any) -> dict[str, Any] | None:
    """The first output message (a model call answers with one choice as tracekit records it)."""
    replies = [message for message in outputs if message.get("role") == "assistant"]
    if not replies:
        return None
    reply = replies[0]
    first = next((m for m in raw if isinstance(m, dict) and m.get("role") == "assistant"), {}) if isinstance(
        raw, list) else {}
    reply["_finish_reason"] = first.get("finish_reason")
    return reply


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    parts = message.get("parts")
    if isinstance(parts, list):
        return [part for part in parts if isinstance(part, dict)]
    content = message.get("content")  # some producers send {"role", "content": "text"}
    return [{"type": "text", "content": content}] if isinstance(content, str) else []


def _part_block(part: dict[str, Any], unknown: set[str]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": str(part.get("content") or "")}
    if kind == "tool_call":
        value = _arguments(part.get("arguments"))
        block = {"type": "tool_use", "id": part.get("id"), "name": part.get("name") or "", "input": value}
        if isinstance(part.get("arguments"), str) and isinstance(value, str):
            block["_input_parse_error"] = True
        return block
    if kind == "tool_call_response":
        return {"type": "tool_result", "tool_use_id": part.get("id"), "content": _result_text(part.get("response"))}
    if kind == "reasoning":
        return {"type": "thinking", "thinking": str(part.get("content") or "")}
    if kind in ("blob", "uri") and part.get("modality", "image") == "image":
        if kind == "blob":
            source = {"type": "base64", "media_type": part.get("mime_type"), "data": part.get("content")}
        else:
            source = {"type": "url", "url": part.get("uri")}
        return {"type": "image", "source": source}
    if kind not in ("blob", "uri", "file"):
        unknown.add(str(kind))
    return dict(part)


def _system(value: Any, unknown: set[str]) -> Content | None:
    parts = value if isinstance(value, list) else [{"type": "text", "content": value}] if isinstance(value, str) else []
    blocks = [_part_block(part, unknown) for part in parts if isinstance(part, dict)]
    return _plain(blocks) if blocks else None


def _plain(blocks: list[dict[str, Any]]) -> Content:
    """One text block as a plain string (as most messages are sent), other content as blocks."""
    if len(blocks) == 1 and blocks[0].get("type") == "text":
        return str(blocks[0]["text"])
    return blocks


def _legacy_flat(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` as OpenAI chat messages."""
    messages = []
    for item in indexed(attributes, prefix):
        message: dict[str, Any] = {"role": item.get("role") or "user", "content": _maybe_parts(item.get("content"))}
        calls = [
            {"id": call.get("id"), "type": "function",
             "function": {"name": call.get("name") or "", "arguments": call.get("arguments") or "{}"}}
            for call in indexed(item, "tool_calls")
        ]
        if calls:
            message["tool_calls"] = calls
        for key in ("tool_call_id", "finish_reason", "name"):
            if item.get(key) is not None:
                message[key] = item[key]
        messages.append(message)
    return messages


_Read = Callable[[str, dict[str, Any]], dict[str, Any]]


def _event_messages(span: Span, names: Container[str], read: _Read, listed: tuple[str, str]) -> list[dict[str, Any]]:
    """The messages a span's events carry: one for each event named in ``names`` (``read(name, fields)``),
    and the objects of each ``listed`` event (its name, and the attribute holding them as a JSON list)."""
    messages: list[dict[str, Any]] = []
    for event in span.events:
        fields = _event_fields(event)
        if event.name in names:
            messages.append(read(event.name, fields))
        elif event.name == listed[0]:
            values = _json(fields.get(listed[1]))
            if isinstance(values, list):
                messages.extend(value for value in values if isinstance(value, dict))
    return messages


def _legacy_message(name: str, fields: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": _LEGACY_ROLES[name], "content": _maybe_parts(fields.get("content"))}
    if fields.get("tool_calls"):
        message["tool_calls"] = _json(fields["tool_calls"])
    if fields.get("id") is not None:
        message["tool_call_id"] = fields["id"]
    return message


def _legacy_choice(_name: str, fields: dict[str, Any]) -> dict[str, Any]:
    message = _json(fields.get("message"))
    message = dict(message) if isinstance(message, dict) else {}
    message.setdefault("content", _maybe_parts(fields.get("content")))
    if fields.get("tool_calls") and not message.get("tool_calls"):
        message["tool_calls"] = _json(fields["tool_calls"])
    message["finish_reason"] = fields.get("finish_reason")
    return message


def _event_fields(event: Any) -> dict[str, Any]:
    fields = dict(event.attributes)
    if isinstance(event.body, dict):
        fields.update(event.body)
    return fields


# --------------------------------------------------------------------------- small readers


def _with_details(span: Span) -> dict[str, Any]:
    """Span attributes with those of an ``operation.details`` event added (content may travel there)."""
    details = [event for event in span.events if event.name == DETAILS_EVENT]
    if not details:
        return span.attributes
    merged = dict(span.attributes)
    for event in details:
        for key, value in {**event.attributes, **(event.body if isinstance(event.body, dict) else {})}.items():
            merged.setdefault(key, value)
    return merged


def _operation_from_name(name: str) -> str | None:
    first = name.split(" ", 1)[0]
    return first if first in (*INFERENCE, *CONTAINERS, *NOT_STEPS, "execute_tool") else None


def _legacy_model_span(attributes: dict[str, Any]) -> bool:
    return "gen_ai.system" in attributes and (
        "gen_ai.request.model" in attributes or "gen_ai.prompt.0.role" in attributes
        or "gen_ai.completion.0.role" in attributes
    )


def _usage(attributes: dict[str, Any]) -> Usage:
    def number(*names: str) -> int | None:
        for name in names:
            value = attributes.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return int(value)
        return None

    cache_read = number("tracekit.usage.cache_read_input_tokens")
    input_tokens = number("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
    if cache_read is None:
        cache_read = number("gen_ai.usage.cache_read.input_tokens")
        if cache_read is not None and input_tokens is not None:
            input_tokens = max(input_tokens - cache_read, 0)
    return Usage(
        input_tokens=input_tokens,
        output_tokens=number("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
        cache_read_input_tokens=cache_read,
        cache_creation_input_tokens=number("tracekit.usage.cache_creation_input_tokens",
                                           "gen_ai.usage.cache_creation.input_tokens"),
    )


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        return parse_json_arguments(value)[0]
    return value if value is not None else {}


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else orjson.dumps(value).decode()


def _maybe_parts(value: Any) -> Any:
    """Content that a producer wrote as the JSON text of a parts list, as that list."""
    if isinstance(value, str) and value.startswith("[{"):
        parsed = _json(value)
        if isinstance(parsed, list) and all(isinstance(p, dict) and "type" in p for p in parsed):
            return parsed
    return value


def _json(value: Any) -> Any:
    if isinstance(value, (bytes, str)):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
