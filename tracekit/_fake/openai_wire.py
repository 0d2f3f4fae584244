"""Replies rendered as the OpenAI Chat Completions API sends them: JSON, SSE chunks, error bodies.

Streams are ``data: {chat.completion.chunk}`` lines: the role in the first delta, text as ``content``
deltas, each tool call as a delta with ``index``, ``id``, ``type`` and ``function.name`` followed by
``function.arguments`` fragments, then a delta carrying ``finish_reason``, a usage chunk with empty
``choices`` when ``stream_options.include_usage`` is set, and ``data: [DONE]``.

Text blocks are joined into the one ``content`` string; thinking blocks are not sent (Chat Completions
has no such field) but count as ``reasoning_tokens``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tracekit._fake.anthropic_wire import retry_headers
from tracekit._fake.replies import ErrorReply, MessageReply, Text, ToolUse
from tracekit._fake.request import FakeRequest
from tracekit._fake.wire import (
    FAKE_CREATED,
    FakeIds,
    WireResponse,
    apply_stream_fault,
    dumps,
    reply_usage,
    split_json,
    split_text,
    thinking_tokens,
    tool_input_json,
)
from tracekit.constants import JSON_CONTENT_TYPE, SSE_CONTENT_TYPE

SYSTEM_FINGERPRINT = "fp_tracekit_fake"

#: Anthropic stop reason -> OpenAI finish_reason.
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}

#: Anthropic error type -> (OpenAI error type, code), where ErrorReply does not say.
ERROR_TYPES: dict[str, tuple[str, str | None]] = {
    "invalid_request_error": ("invalid_request_error", None),
    "authentication_error": ("invalid_request_error", "invalid_api_key"),
    "billing_error": ("insufficient_quota", "insufficient_quota"),
    "permission_error": ("invalid_request_error", None),
    "not_found_error": ("invalid_request_error", None),
    "request_too_large": ("invalid_request_error", None),
    "rate_limit_error": ("requests", "rate_limit_exceeded"),
    "api_error": ("server_error", None),
    "timeout_error": ("timeout", None),
    "overloaded_error": ("server_error", None),
}


def render_message(reply: MessageReply, request: FakeRequest, ids: FakeIds) -> WireResponse:
    """``reply`` as a Chat Completions response to ``request``: JSON or SSE as the request asked."""
    request_id = ids.next("req_fake_")
    if (error := reply.http_error(request.stream)) is not None:
        return render_error(error, request_id)
    completion_id = ids.next("chatcmpl-fake")
    text = "".join(block.text for block in reply.content if isinstance(block, Text))
    has_text = any(isinstance(block, Text) for block in reply.content)
    calls = [_tool_call(block, ids) for block in reply.content if isinstance(block, ToolUse)]
    finish_reason = FINISH_REASONS.get(reply.resolved_stop_reason, "stop")
    head = {
        "id": completion_id,
        "created": FAKE_CREATED,
        "model": reply.model or request.model or "fake-model",
        "service_tier": "default",
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }
    usage = _usage(reply, request)
    headers = {"x-request-id": request_id, "openai-version": "2020-10-01", **reply.headers}
    if not request.stream:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": text if has_text else None,
            "refusal": None,
            "annotations": [],
        }
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        body = {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
        response = WireResponse(200, {"content-type": JSON_CONTENT_TYPE, **headers}, body=dumps(body))
    else:
        chunks = _chunks(head, text if has_text else None, calls, finish_reason, reply.chunk_size)
        if _include_usage(request):
            chunks = [{**chunk, "usage": None} for chunk in chunks]
            chunks.append({**head, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        events = [_frame(dumps(chunk)) for chunk in chunks] + [_frame(b"[DONE]")]
        headers = {"content-type": SSE_CONTENT_TYPE, "cache-control": "no-cache", **headers}
        response = WireResponse(200, headers, events=events)
    error_frame = (
        _frame(dumps({"error": error_object(reply.fault.error)}))
        if reply.fault and reply.fault.error
        else None
    )
    return apply_stream_fault(response, reply.fault, error_frame)


def render_error(error: ErrorReply, request_id: str) -> WireResponse:
    """``error`` as the API's error response: ``{"error": {"message", "type", "param", "code"}}``."""
    headers = {
        "content-type": JSON_CONTENT_TYPE,
        "x-request-id": request_id,
        **retry_headers(error),
        **error.headers,
    }
    return WireResponse(error.status, headers, body=dumps({"error": error_object(error)}))


def error_object(error: ErrorReply) -> dict[str, Any]:
    """The ``error`` object of an error body: ``{"message", "type", "param", "code"}``."""
    mapped_type, mapped_code = ERROR_TYPES.get(error.type, ("server_error", None))
    return {
        "message": error.message,
        "type": error.openai_type or mapped_type,
        "param": error.param,
        "code": error.openai_code if error.openai_code is not None else mapped_code,
    }


def _tool_call(block: ToolUse, ids: FakeIds) -> dict[str, Any]:
    return {
        "id": block.id or ids.next("call_fake_"),
        "type": "function",
        "function": {"name": block.name, "arguments": tool_input_json(block)},
    }


def _chunks(
    head: dict[str, Any], text: str | None, calls: list[dict[str, Any]], finish_reason: str, chunk_size: int
) -> list[dict[str, Any]]:
    deltas: list[dict[str, Any]] = []
    if text is not None or not calls:
        deltas.append({"role": "assistant", "content": "", "refusal": None})
        deltas.extend({"content": piece} for piece in split_text(text or "", chunk_size) if piece)
    for index, call in enumerate(calls):
        header = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        if not deltas:
            deltas.append({"role": "assistant", "content": None, "tool_calls": [header], "refusal": None})
        else:
            deltas.append({"tool_calls": [header]})
        for piece in split_json(call["function"]["arguments"], chunk_size):
            deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    choices: list[dict[str, Any]] = [
        {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None} for delta in deltas
    ]
    choices.append({"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish_reason})
    return [{**head, "object": "chat.completion.chunk", "choices": [choice]} for choice in choices]


class TokenCounts(NamedTuple):
    """A reply's token counts as both OpenAI APIs report them: the input count includes the cached tokens and
    those written to the cache (Anthropic counts them apart)."""

    input: int
    cached: int
    cache_written: int
    output: int
    reasoning: int


def token_counts(reply: MessageReply, request: FakeRequest) -> TokenCounts:
    """The counts of ``reply_usage`` in OpenAI's terms, with the reasoning (thinking) tokens."""
    usage = reply_usage(reply, request)
    cached, written = usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"]
    return TokenCounts(usage["input_tokens"] + cached + written, cached, written, usage["output_tokens"],
                       thinking_tokens(reply))


def _usage(reply: MessageReply, request: FakeRequest) -> dict[str, Any]:
    counts = token_counts(reply, request)
    return {
        "prompt_tokens": counts.input,
        "completion_tokens": counts.output,
        "total_tokens": counts.input + counts.output,
        "prompt_tokens_details": {"cached_tokens": counts.cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": counts.reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _include_usage(request: FakeRequest) -> bool:
    options = request.body.get("stream_options") if isinstance(request.body, dict) else None
    return isinstance(options, dict) and bool(options.get("include_usage"))


def _frame(data: bytes) -> bytes:
    return b"data: " + data + b"\n\n"
