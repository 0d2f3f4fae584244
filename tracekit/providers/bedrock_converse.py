"""Amazon Bedrock's Converse API (``POST /model/{modelId}/converse`` and ``/converse-stream``): bodies and
event streams to and from canonical form.

The shapes are those of the Bedrock Runtime API reference
(https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html and
``API_runtime_ConverseStream.html``): a request has ``messages`` (``role``, ``content[]``), ``system[]``,
``inferenceConfig`` and ``toolConfig.tools[].toolSpec``; a content block is one key: ``text``,
``toolUse`` (``toolUseId``, ``name``, ``input``), ``toolResult`` (``toolUseId``, ``content[]`` of ``text`` /
``json`` / ..., ``status``), ``reasoningContent``, ``image``, ... A response is
``{"output": {"message": ...}, "stopReason", "usage": {"inputTokens", "outputTokens", "totalTokens"},
"metrics"}``. Canonical blocks are Anthropic-shaped: ``text``, ``tool_use``, ``tool_result`` (its content as
text blocks; ``status: error`` is ``is_error``), ``thinking``, ``redacted_thinking``, ``image``; a block of
another kind is kept whole under ``{"type": "bedrock", "bedrock": block}`` and given back as it was.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
from typing_extensions import Unpack

from tracekit.providers.base import (
    Overrides,
    StreamAssembler,
    StreamParser,
    ToolResultRef,
    overridden,
    result_text,
    tool_use,
)
from tracekit.providers.bedrock_base import BedrockProvider
from tracekit.providers.bedrock_converse_stream import ConverseEventParser, ConverseStreamAssembler, render_events
from tracekit.trace.models import Content, Usage

#: Converse stop reasons in the canonical (Messages API) terms; the others are kept as they are.
_STOP_REASONS = {"guardrail_intervened": "refusal", "content_filtered": "refusal",
                 "model_context_window_exceeded": "max_tokens"}  # fmt: skip
#: ``usage`` fields -> canonical usage fields.
_USAGE = {"inputTokens": "input_tokens", "outputTokens": "output_tokens",
          "cacheReadInputTokens": "cache_read_input_tokens",
          "cacheWriteInputTokens": "cache_creation_input_tokens"}  # fmt: skip


def block_to_canonical(block: Any) -> dict[str, Any]:
    """One Converse content block as a canonical block."""
    if not isinstance(block, dict):
        return {"type": "bedrock", "bedrock": block}
    if isinstance(block.get("text"), str) and len(block) == 1:
        return {"type": "text", "text": block["text"]}
    call = block.get("toolUse")
    if isinstance(call, dict):
        return tool_use(call.get("toolUseId"), call.get("name"), call.get("input"))
    result = block.get("toolResult")
    if isinstance(result, dict):
        parts = [_result_part(part) for part in result.get("content") or []]
        canonical: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.get("toolUseId"), "content": parts}
        if result.get("status") == "error":
            canonical["is_error"] = True
        return canonical
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, dict):
        text = reasoning.get("reasoningText")
        if isinstance(text, dict):
            thinking = {"type": "thinking", "thinking": str(text.get("text", ""))}
            if "signature" in text:
                thinking["signature"] = text["signature"]
            return thinking
        if "redactedContent" in reasoning:
            return {"type": "redacted_thinking", "data": reasoning["redactedContent"]}
    image = block.get("image")
    if isinstance(image, dict) and isinstance(image.get("source"), dict) and "bytes" in image["source"]:
        source = {"type": "base64", "media_type": f"image/{image.get('format', 'png')}",
                  "data": image["source"]["bytes"]}  # fmt: skip
        return {"type": "image", "source": source}
    return {"type": "bedrock", "bedrock": copy.deepcopy(block)}


def _result_part(part: Any) -> dict[str, Any]:
    """A tool result's content part: text as it is, JSON as its text, any other kind as ``block_to_canonical``."""
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if isinstance(part, dict) and "json" in part:
        return {"type": "text", "text": orjson.dumps(part["json"]).decode()}
    return block_to_canonical(part)


def block_from_canonical(block: dict[str, Any]) -> dict[str, Any]:
    """A canonical block as a Converse content block (the inverse of ``block_to_canonical``)."""
    kind = block.get("type")
    if kind == "text":
        return {"text": block.get("text", "")}
    if kind == "tool_use":
        return {"toolUse": {"toolUseId": block.get("id"), "name": block.get("name"), "input": block.get("input")}}
    if kind == "thinking":
        text = {"text": block.get("thinking", "")}
        if "signature" in block:
            text["signature"] = block["signature"]
        return {"reasoningContent": {"reasoningText": text}}
    if kind == "redacted_thinking":
        return {"reasoningContent": {"redactedContent": block.get("data")}}
    if kind == "tool_result":
        content = block.get("content")
        parts = [{"text": content}] if isinstance(content, str) else [block_from_canonical(p) for p in content or []]
        return {"toolResult": {"toolUseId": block.get("tool_use_id"), "content": parts,
                               "status": "error" if block.get("is_error") else "success"}}  # fmt: skip
    if kind == "image" and isinstance(block.get("source"), dict):
        source = block["source"]
        return {"image": {"format": str(source.get("media_type", "image/png")).split("/")[-1],
                          "source": {"bytes": source.get("data")}}}  # fmt: skip
    return copy.deepcopy(block.get("bedrock", block))


def converse_usage(usage: Any) -> Usage:
    """A Converse ``usage`` object as canonical usage (``totalTokens`` and the rest kept as they are)."""
    if not isinstance(usage, dict):
        return Usage()
    values = {key: value for key, value in usage.items() if key not in _USAGE}
    values.update({name: usage[key] for key, name in _USAGE.items() if isinstance(usage.get(key), int)})
    return Usage(**values)


class BedrockConverse(BedrockProvider):
    """The Converse API (see the module docstring)."""

    NAME = "bedrock_converse"
    ROUTE = "/model/{model}/{operation:converse|converse-stream}"
    OPERATIONS = ("converse-stream", "converse")

    def request_conversation(self, body: dict[str, Any]) -> tuple[Content | None, list[dict[str, Any]]]:
        """``system`` (one string for one text part, else text blocks) and ``messages``, canonical."""
        parts = [block_to_canonical(part) for part in body.get("system") or [] if isinstance(part, dict)]
        system: Content | None = None
        if len(parts) == 1 and parts[0].get("type") == "text":
            system = parts[0]["text"]
        elif parts:
            system = parts
        messages = [{"role": message.get("role"),
                     "content": [block_to_canonical(block) for block in message.get("content") or []]}
                    for message in body.get("messages") or [] if isinstance(message, dict)]  # fmt: skip
        return system, messages

    def response_to_canonical(self, body: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """``output.message`` as the assistant message; every other field (and ``output``'s) is meta."""
        if self.response_error(body) is not None:
            return None, copy.deepcopy(body)
        meta = copy.deepcopy(body)
        output = meta.pop("output", None)
        output = output if isinstance(output, dict) else {}
        message = output.pop("message", None)
        message = message if isinstance(message, dict) else {}
        meta["_output"] = output
        content = [block_to_canonical(block) for block in message.get("content") or []]
        return {"role": "assistant", "content": content}, meta

    def canonical_to_response(
        self, message: dict[str, Any] | None, meta: dict[str, Any] | None = None, **overrides: Unpack[Overrides]
    ) -> dict[str, Any]:
        """The Converse response body (``stopReason`` from the content and zero usage when meta has none)."""
        _model, usage, stop_reason = overridden(overrides)
        meta = copy.deepcopy(meta or {})
        if message is None:
            return meta
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        output = meta.pop("_output", {})
        body: dict[str, Any] = {"output": {**output, "message": {
            "role": "assistant", "content": [block_from_canonical(block) for block in blocks]}}}  # fmt: skip
        if "stopReason" not in meta:
            body["stopReason"] = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
        if "usage" not in meta:
            body["usage"] = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        body.update(meta)
        if stop_reason is not None:
            body["stopReason"] = stop_reason
        if usage is not None:
            counts = {"inputTokens": usage.input_tokens or 0, "outputTokens": usage.output_tokens or 0}
            body["usage"] = {**counts, "totalTokens": counts["inputTokens"] + counts["outputTokens"]}
        return body

    def response_usage(self, body: dict[str, Any]) -> Usage:
        """``usage``: input, output and cache tokens."""
        return converse_usage(body.get("usage"))

    def response_stop_reason(self, body: dict[str, Any]) -> str | None:
        """``stopReason``."""
        reason = body.get("stopReason")
        return reason if isinstance(reason, str) else None

    def canonical_stop_reason(self, body: dict[str, Any]) -> str | None:
        """The same terms, but a guardrail or content filter is a ``refusal``."""
        reason = self.response_stop_reason(body)
        return _STOP_REASONS.get(reason, reason) if reason is not None else None

    def response_model(self, body: dict[str, Any]) -> str | None:
        """None: a Converse response does not name the model (the path did)."""
        return None

    def response_id(self, body: dict[str, Any]) -> str | None:
        """None: a Converse response has no id."""
        return None

    def with_note(self, body: dict[str, Any], note: str) -> dict[str, Any] | None:
        """The note as a text block at the end of the last user message, or as a user message of its own."""
        messages = self.request_items(body)
        if messages is None:
            return None
        messages = list(messages)
        last = messages[-1] if messages else None
        if isinstance(last, dict) and last.get("role") == "user":
            messages[-1] = {**last, "content": [*(last.get("content") or []), {"text": note}]}
        else:
            messages.append({"role": "user", "content": [{"text": note}]})
        return self.with_request_items(body, messages)

    def item_tool_calls(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """The ``toolUse`` blocks of an assistant message."""
        content = item.get("content")
        if item.get("role") != "assistant" or not isinstance(content, list):
            return []
        return [block_to_canonical(block) for block in content if isinstance(block, dict) and "toolUse" in block]

    def item_tool_results(self, item: dict[str, Any]) -> list[ToolResultRef]:
        """The ``toolResult`` blocks of a user message, by position in its content."""
        content = item.get("content")
        if item.get("role") != "user" or not isinstance(content, list):
            return []
        results = []
        for position, block in enumerate(content):
            result = block.get("toolResult") if isinstance(block, dict) else None
            if isinstance(result, dict):
                results.append(ToolResultRef(position, result.get("toolUseId"), result.get("content"),
                                             result.get("status") == "error"))  # fmt: skip
        return results

    def with_tool_result(self, item: dict[str, Any], position: int, content: Content, is_error: bool) -> dict[str, Any]:
        """The user message whose ``toolResult`` at ``position`` says ``content`` as text, ``status`` set."""
        blocks = list(item["content"])
        result = {**blocks[position]["toolResult"], "content": [{"text": result_text(content)}],
                  "status": "error" if is_error else "success"}  # fmt: skip
        blocks[position] = {**blocks[position], "toolResult": result}
        return {**item, "content": blocks}

    def stream_parser(self) -> StreamParser:
        """Event-stream messages as events named by their ``:event-type`` (``:exception-type``)."""
        return ConverseEventParser()

    def stream_assembler(self) -> StreamAssembler:
        """Events into the Converse response body, as boto3's ``converse_stream`` consumers build it."""
        return ConverseStreamAssembler()

    def render_stream(self, body: dict[str, Any]) -> bytes:
        """A Converse response body (or error body) as the event stream ``converse-stream`` would send."""
        return render_events(body, self.response_error(body))

    def error_event(self, error_type: str, message: str) -> bytes:
        """An ``exception`` message ending the stream."""
        return render_events({}, {"type": error_type, "message": message})
