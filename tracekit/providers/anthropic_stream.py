"""The Messages API's server-sent events: assembling a stream into the response body as the official SDK
does (``AnthropicStreamAssembler``), and rendering a body as the events that assemble back to it
(``render_events``). Used through ``tracekit.providers.anthropic``."""

from __future__ import annotations

import copy
from typing import Any

import jiter
import orjson

from tracekit.providers.base import AssemblerBase, event_object
from tracekit.providers.sse import ServerSentEvent, encode_json_event

#: Blocks whose ``input`` streams as JSON text.
TOOL_INPUT_BLOCKS = ("tool_use", "server_tool_use")
# message_delta usage fields that overwrite the message_start values when given (not None); the last
# two only the SDK's beta stream merges, the plain one drops them.
_DELTA_USAGE_OPTIONAL = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "server_tool_use",
    "output_tokens_details",
    "iterations",
    "fallback_credit",
)


class AnthropicStreamAssembler(AssemblerBase):
    """Accumulates Messages API stream events into the response body, as the official SDK does
    (``error`` holds the body of an ``error`` event; ``done`` turns true at ``message_stop``)."""

    def __init__(self) -> None:
        super().__init__()
        self._message: dict[str, Any] | None = None
        # Deltas kept as lists of pieces, joined (and tool input parsed) when the body is read: joining the
        # growing text at every delta made a long stream cost quadratic time (issue 27: 60 MB in 54 s).
        self._pieces: dict[tuple[int, str], list[str]] = {}

    def _snapshot_body(self) -> dict[str, Any]:
        if self._message is None:
            return {}
        content = self._message["content"]
        for (index, field), pieces in self._pieces.items():
            joined = "".join(pieces)
            pieces[:] = [joined]  # (joined once: a later read joins only what came since)
            if field == "partial_json":
                if joined:
                    content[index]["input"] = parse_partial_json(joined)
            else:
                content[index][field] = joined
        return copy.deepcopy(self._message)

    def _piece(self, index: int, field: str, block: dict[str, Any], text: Any) -> None:
        pieces = self._pieces.get((index, field))
        if pieces is None:
            start = block.get(field, "") if field != "partial_json" else ""
            pieces = self._pieces[(index, field)] = [start] if isinstance(start, str) and start else []
        if isinstance(text, str):
            pieces.append(text)

    def feed(self, event: ServerSentEvent) -> None:
        """Apply one event (``ping`` and unknown events are ignored, as by the SDK)."""
        name = event.event
        if name == "ping":
            return
        data = event_object(event)  # (parsed for this call: the assembler may keep its parts without a copy)
        if data is None:
            return
        name = name or data.get("type")
        if name == "error":
            self._error = data if data.get("type") == "error" else {"type": "error", "error": data}
        elif name == "message_start":
            self._message = data.get("message") or {}
            self._message.setdefault("content", [])
        elif self._message is None:
            return
        elif name == "content_block_start":
            self._message["content"].append(data.get("content_block") or {})
        elif name == "content_block_delta":
            self._apply_delta(data)
        elif name == "message_delta":
            self._apply_message_delta(data)
        elif name == "message_stop":
            self._done = True

    def _apply_delta(self, data: dict[str, Any]) -> None:
        index = data.get("index")
        content = self._message["content"] if self._message else []
        if not isinstance(index, int) or not 0 <= index < len(content):
            return
        block, delta = content[index], data.get("delta") or {}
        kind, block_type = delta.get("type"), block.get("type")
        if kind == "text_delta" and block_type == "text":
            self._piece(index, "text", block, delta.get("text", ""))
        elif kind == "input_json_delta" and block_type in TOOL_INPUT_BLOCKS:
            self._piece(index, "partial_json", block, delta.get("partial_json", ""))
        elif kind == "citations_delta" and block_type == "text":
            if block.get("citations"):
                block["citations"].append(delta.get("citation"))
            else:
                block["citations"] = [delta.get("citation")]
        elif kind == "thinking_delta" and block_type == "thinking":
            self._piece(index, "thinking", block, delta.get("thinking", ""))
        elif kind == "signature_delta" and block_type == "thinking":
            block["signature"] = delta.get("signature")
        elif kind == "compaction_delta" and block_type == "compaction":
            block["content"] = delta.get("content")
            block["encrypted_content"] = delta.get("encrypted_content")

    def _apply_message_delta(self, data: dict[str, Any]) -> None:
        message = self._message or {}
        delta = data.get("delta") or {}
        message["stop_reason"] = delta.get("stop_reason")
        message["stop_sequence"] = delta.get("stop_sequence")
        if "stop_details" in delta or "stop_details" in message:
            message["stop_details"] = delta.get("stop_details")
        for key, source in (("container", delta), ("context_management", data), ("input_transformations", data)):
            if source.get(key) is not None:
                message[key] = source[key]
        usage = data.get("usage") or {}
        target = message.setdefault("usage", {})
        target["output_tokens"] = usage.get("output_tokens")
        for key in _DELTA_USAGE_OPTIONAL:
            if usage.get(key) is not None:
                target[key] = usage[key]


def render_events(body: dict[str, Any]) -> bytes:
    """A response body (not an error body) as the SSE bytes the Messages API would have streamed."""
    start = {key: copy.deepcopy(value) for key, value in body.items() if key != "content"}
    start.update(content=[], stop_reason=None, stop_sequence=None)
    if "stop_details" in body:
        start["stop_details"] = None
    parts = [_event("message_start", message=start), _event("ping")]
    for index, block in enumerate(body.get("content") or []):
        first, deltas = _block_events(block)
        parts.append(_event("content_block_start", index=index, content_block=first))
        parts.extend(_event("content_block_delta", index=index, delta=delta) for delta in deltas)
        parts.append(_event("content_block_stop", index=index))
    ending: dict[str, Any] = {"stop_reason": body.get("stop_reason"), "stop_sequence": body.get("stop_sequence")}
    if "stop_details" in body:
        ending["stop_details"] = body["stop_details"]
    usage = {"output_tokens": (body.get("usage") or {}).get("output_tokens", 0)}
    parts.append(_event("message_delta", delta=ending, usage=usage))
    parts.append(_event("message_stop"))
    return b"".join(parts)


def _event(name: str, **fields: Any) -> bytes:
    return encode_json_event({"type": name, **fields}, name)


def _block_events(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``content_block_start`` block and the deltas that grow it into ``block``."""
    kind = block.get("type")
    if kind == "text":
        first = {**block, "text": ""}
        deltas: list[dict[str, Any]] = []
        if block.get("text"):
            deltas.append({"type": "text_delta", "text": block["text"]})
        if block.get("citations"):
            first["citations"] = []
            deltas += [{"type": "citations_delta", "citation": citation} for citation in block["citations"]]
        return first, deltas
    if kind == "thinking":
        first = {**block, "thinking": ""}
        deltas = [{"type": "thinking_delta", "thinking": block["thinking"]}] if block.get("thinking") else []
        if "signature" in block:
            first["signature"] = ""
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        return first, deltas
    if kind in TOOL_INPUT_BLOCKS:
        value = block.get("input", {})
        text = value if isinstance(value, str) else orjson.dumps(value).decode()
        return {**block, "input": {}}, ([{"type": "input_json_delta", "partial_json": text}] if value != {} else [])
    if kind == "compaction":
        delta = {"type": "compaction_delta", "content": block.get("content"),
                 "encrypted_content": block.get("encrypted_content")}
        return {**block, "content": None, "encrypted_content": None}, [delta]
    return copy.deepcopy(block), []


def parse_partial_json(text: str) -> Any:
    """The value of a possibly truncated JSON document (unfinished strings dropped); the raw ``text`` when
    it cannot be parsed."""
    try:
        return jiter.from_json(text.encode("utf-8"), partial_mode=True)
    except ValueError:
        return text
