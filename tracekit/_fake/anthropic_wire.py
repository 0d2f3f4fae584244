"""Replies rendered as the Anthropic Messages API sends them: JSON, SSE, error bodies.

The SSE shape follows the API's documented event flow (and the real captures kept by the anthropic SDK's
test fixtures): ``message_start``; per block ``content_block_start``, deltas, ``content_block_stop``, with
one ``ping`` after the first ``content_block_start``; ``message_delta`` with the stop reason and usage;
``message_stop``. Tool input arrives as ``input_json_delta`` fragments, the first one empty; thinking as
``thinking_delta`` then one ``signature_delta``; ``redacted_thinking`` whole in its start event.
"""

from __future__ import annotations

from typing import Any

from tracekit._fake.replies import Block, ErrorReply, MessageReply, RedactedThinking, Text, Thinking, ToolUse
from tracekit._fake.request import FakeRequest
from tracekit._fake.wire import (
    FakeIds,
    WireResponse,
    apply_stream_fault,
    dumps,
    reply_usage,
    stream_pieces,
    thinking_signature,
)
from tracekit.constants import JSON_CONTENT_TYPE, SSE_CONTENT_TYPE

# The real API sends the ping payload with a space after the colon, unlike every other event.
PING_DATA = b'{"type": "ping"}'


def render_message(reply: MessageReply, request: FakeRequest, ids: FakeIds, message_id: str) -> WireResponse:
    """``reply`` as a Messages API response to ``request``: JSON or SSE as the request asked."""
    if (error := reply.http_error(request.stream)) is not None:
        return render_error(error, ids.next("req_fake_"))
    request_id = ids.next("req_fake_")
    content = [_block_json(block, ids) for block in reply.content]
    usage = reply_usage(reply, request)
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model or request.model or "fake-model",
        "content": content,
        "stop_reason": reply.resolved_stop_reason,
        "stop_sequence": None,
        "usage": {**usage, "service_tier": "standard"},
    }
    headers = {"request-id": request_id, **reply.headers}
    if not request.stream:
        response = WireResponse(200, {"content-type": JSON_CONTENT_TYPE, **headers}, body=dumps(message))
    else:
        events = _message_events(message, reply, usage)
        headers = {"content-type": SSE_CONTENT_TYPE, "cache-control": "no-cache", **headers}
        response = WireResponse(200, headers, events=events)
    response.message = message
    error_frame = _error_frame(reply.fault.error) if reply.fault and reply.fault.error else None
    return apply_stream_fault(response, reply.fault, error_frame)


def render_error(error: ErrorReply, request_id: str) -> WireResponse:
    """``error`` as the API's error response: ``{"type": "error", "error": {...}, "request_id": ...}``."""
    body = {"type": "error", "error": _error_object(error), "request_id": request_id}
    headers = {
        "content-type": JSON_CONTENT_TYPE,
        "request-id": request_id,
        **retry_headers(error),
        **error.headers,
    }
    return WireResponse(error.status, headers, body=dumps(body))


def retry_headers(error: ErrorReply) -> dict[str, str]:
    """``x-should-retry``, ``retry-after-ms`` and ``retry-after`` as ``error`` asks (both providers)."""
    headers: dict[str, str] = {}
    if error.should_retry is not None:
        headers["x-should-retry"] = "true" if error.should_retry else "false"
    if error.retry_after_ms is not None:
        headers["retry-after-ms"] = str(error.retry_after_ms)
    if error.retry_after is not None:
        headers["retry-after"] = f"{error.retry_after:g}"
    return headers


def _error_object(error: ErrorReply) -> dict[str, Any]:
    body: dict[str, Any] = {"type": error.type, "message": error.message}
    if error.details is not None:
        body["details"] = dict(error.details)
    return body


def _error_frame(error: ErrorReply) -> bytes:
    return _frame("error", dumps({"type": "error", "error": _error_object(error)}))


def _block_json(block: Block, ids: FakeIds) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUse):
        return {
            "type": "tool_use",
            "id": block.id or ids.next("toolu_fake_"),
            "name": block.name,
            "input": dict(block.input),
        }
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.thinking, "signature": thinking_signature(block)}
    return {"type": "redacted_thinking", "data": block.data}


def _message_events(message: dict[str, Any], reply: MessageReply, usage: dict[str, int]) -> list[bytes]:
    start_message = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1, "service_tier": "standard"},
    }
    events = [_event("message_start", {"type": "message_start", "message": start_message})]
    for index, (block, block_json) in enumerate(zip(reply.content, message["content"], strict=True)):
        events.append(
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": _start_block(block_json)},
            )
        )
        if index == 0:
            events.append(_frame("ping", PING_DATA))
        for delta in _deltas(block, block_json, reply.chunk_size):
            events.append(
                _event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    if not reply.content:
        events.append(_frame("ping", PING_DATA))
    events.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": usage,
            },
        )
    )
    events.append(_event("message_stop", {"type": "message_stop"}))
    return events


def _start_block(block_json: dict[str, Any]) -> dict[str, Any]:
    kind = block_json["type"]
    if kind == "text":
        return {"type": "text", "text": ""}
    if kind == "tool_use":
        return {**block_json, "input": {}}
    if kind == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    return block_json


def _deltas(block: Block, block_json: dict[str, Any], chunk_size: int) -> list[dict[str, Any]]:
    pieces = stream_pieces(block, chunk_size)
    if isinstance(block, Text):
        return [{"type": "text_delta", "text": piece} for piece in pieces]
    if isinstance(block, ToolUse):
        return [{"type": "input_json_delta", "partial_json": piece} for piece in ["", *pieces]]
    if isinstance(block, Thinking):
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in pieces]
        return [*deltas, {"type": "signature_delta", "signature": block_json["signature"]}]
    assert isinstance(block, RedactedThinking)
    return []


def _event(name: str, data: dict[str, Any]) -> bytes:
    return _frame(name, dumps(data))


def _frame(name: str, data: bytes) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"
