"""The Anthropic Messages API (``POST /v1/messages``): bodies and SSE streams to and from canonical form.

The canonical content blocks *are* Anthropic's, so conversion is mostly a matter of keeping every
field: a response body splits into the assistant message (its ``content``) and ``meta`` (everything
else: id, model, stop reason, usage, unknown fields).

Stream assembly follows the official SDK's ``accumulate_event`` (anthropic-sdk-python,
``lib/streaming/_beta_messages.py``, the superset of the plain variant: it also fills ``compaction``
blocks and keeps ``usage.iterations``): usage
numbers on ``message_delta`` are totals that overwrite, tool input JSON is parsed partially as it
grows (``parse_partial_json``: ``jiter.from_json(..., partial_mode=True)`` as the SDK does, so a cut-off
document gives its complete part), ``signature_delta`` replaces the signature.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from typing_extensions import Unpack

from tracekit.providers.anthropic_stream import TOOL_INPUT_BLOCKS, AnthropicStreamAssembler, render_events
from tracekit.providers.base import (
    NOT_CONTINUED,
    Continuation,
    Overrides,
    ToolResultRef,
    assemble,
    overridden,
)
from tracekit.providers.base import STREAM_CONTENT_TYPE as STREAM_CONTENT_TYPE
from tracekit.providers.base import for_route as for_route
from tracekit.providers.base import request_items as request_items
from tracekit.providers.base import request_model as request_model
from tracekit.providers.base import request_stream as request_stream
from tracekit.providers.base import response_id as response_id
from tracekit.providers.base import response_model as response_model
from tracekit.providers.base import stream_parser as stream_parser
from tracekit.providers.base import stream_splitter as stream_splitter
from tracekit.providers.base import with_request_items as with_request_items
from tracekit.providers.sse import ServerSentEvent, encode_json_event
from tracekit.trace.canonical import content_hash
from tracekit.trace.models import Content, Usage

NAME = "anthropic"
ROUTE = "/v1/messages"
API_PATHS = ("/v1/messages",)
#: Headers only the anthropic SDK sends (OpenAI-compatible clients send ``authorization``).
CLIENT_HEADERS = ("anthropic-version", "x-api-key")

# Error types by HTTP status, from Anthropic's "Errors" documentation page.
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
def request_conversation(body: dict[str, Any]) -> tuple[Content | None, list[dict[str, Any]]]:
    """The request's ``system`` and ``messages`` as a canonical conversation (already Anthropic-shaped)."""
    system = body.get("system")
    messages = [
        {"role": message.get("role"), "content": message.get("content", "")}
        for message in body.get("messages") or []
        if isinstance(message, dict)
    ]
    return (system if system not in (None, "", []) else None), messages


def request_continuation(body: dict[str, Any]) -> Continuation:
    """A request with a ``thread`` (the anthropic SDK 2.x tool runner) keeps its conversation on the server;
    ``{"type": "continue", "previous_message_id": ...}`` continues from that reply with only the new messages."""
    thread = body.get("thread")
    if not isinstance(thread, dict):
        return NOT_CONTINUED
    previous = thread.get("previous_message_id") if thread.get("type") == "continue" else None
    return Continuation(True, str(previous) if previous else None)


def item_tool_calls(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_use`` blocks of an assistant message (already canonical)."""
    content = item.get("content")
    if item.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict) and block.get("type") == "tool_use"]


def item_tool_results(item: dict[str, Any]) -> list[ToolResultRef]:
    """The ``tool_result`` blocks of a user message, by position in its content."""
    content = item.get("content")
    if item.get("role") != "user" or not isinstance(content, list):
        return []
    return [
        ToolResultRef(position, block.get("tool_use_id"), block.get("content"), bool(block.get("is_error", False)))
        for position, block in enumerate(content)
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def with_tool_result(item: dict[str, Any], position: int, content: Content, is_error: bool) -> dict[str, Any]:
    """The user message whose ``tool_result`` block at ``position`` says ``content`` (``is_error`` kept)."""
    blocks = list(item["content"])
    block = {**blocks[position], "content": content}
    if is_error:
        block["is_error"] = True
    else:
        block.pop("is_error", None)
    blocks[position] = block
    return {**item, "content": blocks}


def response_to_canonical(body: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Split a response body into the canonical assistant message and ``meta`` (all other fields).

    An error body gives ``(None, body)``. A tool_use whose input is not an object (a stream cut in
    invalid JSON) is marked ``_input_parse_error`` in the canonical block.
    """
    if response_error(body) is not None:
        return None, copy.deepcopy(body)
    meta = {key: copy.deepcopy(value) for key, value in body.items() if key != "content"}
    return _assistant_message(body), meta


def _assistant_message(body: dict[str, Any]) -> dict[str, Any]:
    """The canonical assistant message of a body that is no error (its content blocks copied)."""
    blocks = []
    for block in body.get("content") or []:
        block = copy.deepcopy(block)
        if isinstance(block, dict) and block.get("type") in TOOL_INPUT_BLOCKS and isinstance(block.get("input"), str):
            block["_input_parse_error"] = True
        blocks.append(block)
    return {"role": "assistant", "content": blocks}


def canonical_to_response(
    message: dict[str, Any] | None, meta: dict[str, Any] | None = None, **overrides: Unpack[Overrides]
) -> dict[str, Any]:
    """The Messages API response body for a canonical assistant message.

    ``meta`` (from ``response_to_canonical``) supplies every non-content field; without it a complete
    body is made up (a deterministic id, ``stop_reason`` from the content, zero usage). Keyword
    arguments override ``meta``. ``message=None`` returns the error body held in ``meta``.
    """
    model, usage, stop_reason = overridden(overrides)
    meta = copy.deepcopy(meta or {})
    if message is None:
        if response_error(meta) is None:
            raise ValueError("canonical_to_response: no message and no error body in meta")
        return meta
    blocks = _blocks(message.get("content"))
    body: dict[str, Any] = {}
    if meta.get("type") != "message":  # not the rest of a real body: fill in what a body must have
        body = {
            "id": "msg_" + content_hash(blocks, 24),
            "type": "message",
            "role": "assistant",
            "model": model or "unknown",
            "stop_reason": "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
    body.update(meta)
    body["content"] = blocks
    if model is not None:
        body["model"] = model
    if stop_reason is not None:
        body["stop_reason"] = stop_reason
    if usage is not None:
        body["usage"] = {"input_tokens": 0, "output_tokens": 0, **usage.model_dump(exclude_none=True)}
    return body


def response_message(body: dict[str, Any]) -> dict[str, Any] | None:
    """The canonical assistant message of a response body (None for an error body; the proxy asks this of
    every answer, so the rest of the body is not copied as ``response_to_canonical`` does)."""
    return None if response_error(body) is not None else _assistant_message(body)


def reply_items(body: dict[str, Any]) -> list[Any]:
    """The assistant message a response adds to a kept conversation (its ``content`` as sent)."""
    return [{"role": "assistant", "content": body.get("content") or []}]


def response_usage(body: dict[str, Any]) -> Usage:
    """The body's ``usage`` (input, output, cache read and creation tokens, and any other field)."""
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return Usage()
    values = {key: value for key, value in usage.items() if key not in _USAGE_FIELDS}
    values.update({key: usage[key] for key in _USAGE_FIELDS if isinstance(usage.get(key), int)})
    return Usage(**values)


def response_stop_reason(body: dict[str, Any]) -> str | None:
    """``stop_reason`` of the body (``end_turn``, ``tool_use``, ``max_tokens``, ``refusal``, ...)."""
    reason = body.get("stop_reason")
    return reason if isinstance(reason, str) else None


def with_note(body: dict[str, Any], note: str) -> dict[str, Any] | None:
    """The note as a text block at the end of the last user message (the one holding the tool results), or
    as a user message of its own after an assistant message."""
    messages = request_items(body)
    if messages is None:
        return None
    messages = list(messages)
    last = messages[-1] if messages else None
    if isinstance(last, dict) and last.get("role") == "user":
        content = last.get("content")
        blocks = list(content) if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
        messages[-1] = {**last, "content": [*blocks, {"type": "text", "text": note}]}
    else:
        messages.append({"role": "user", "content": note})
    return with_request_items(body, messages)


def canonical_stop_reason(body: dict[str, Any]) -> str | None:
    """The body's ``stop_reason``: the canonical terms are this API's."""
    return response_stop_reason(body)


def response_error(body: dict[str, Any]) -> dict[str, Any] | None:
    """The ``error`` object of an error body (``{"type": "error", "error": {...}}``), else None."""
    if body.get("type") == "error":
        error = body.get("error")
        return error if isinstance(error, dict) else {"type": "api_error", "message": str(error)}
    return None


def error_body(status: int, message: str, type: str | None = None, code: str | None = None) -> dict[str, Any]:
    """An Anthropic error body for HTTP ``status`` (the type is chosen from the status unless given; the shape
    has no ``code``)."""
    kind = type or _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def stream_may_end(chunk: bytes) -> bool:
    """Whether the chunk may hold ``message_stop``."""
    return b"message_stop" in chunk


def error_event(error_type: str, message: str) -> bytes:
    """An ``error`` event, as the Messages API ends a stream that failed mid-way."""
    return encode_json_event({"type": "error", "error": {"type": error_type, "message": message}}, "error")


def stream_assembler() -> AnthropicStreamAssembler:
    """A new incremental assembler for one Messages API stream."""
    return AnthropicStreamAssembler()


def assemble_stream(events: Iterable[ServerSentEvent]) -> dict[str, Any]:
    """The response body a whole stream adds up to (the error body if it carried an ``error`` event)."""
    return assemble(AnthropicStreamAssembler(), events)


def render_stream(body: dict[str, Any]) -> bytes:
    """A JSON response body (or error body) as the SSE bytes the Messages API would have streamed."""
    if response_error(body) is not None:
        return encode_json_event(body, "error")
    return render_events(body)


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Canonical content as Messages API blocks (a string becomes one text block; ``_`` keys dropped)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [
        {key: copy.deepcopy(value) for key, value in block.items() if not key.startswith("_")}
        for block in content
        if isinstance(block, dict)
    ]
