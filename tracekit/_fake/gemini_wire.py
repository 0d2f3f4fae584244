"""Replies rendered as the Gemini API sends them: ``generateContent`` JSON, ``streamGenerateContent?alt=sse``
chunks, ``countTokens`` and error bodies (the format: ``tracekit.providers.gemini``).

A reply's blocks become parts: thinking -> ``{"text", "thought": true, "thoughtSignature"}``, text ->
``{"text"}``, a tool call -> ``{"functionCall": {"name", "args"}}`` (with ``id`` only when the script gives
one: the Gemini API may leave it out, and clients must cope). ``finishReason`` is ``STOP`` (also for a
tool call, as the API says), ``MAX_TOKENS`` or ``SAFETY`` (a refusal). A stream sends each text in
``chunk_size`` pieces, each function call whole, and ``finishReason`` with ``usageMetadata`` in its last
chunk; there is no ``[DONE]``.
"""

from __future__ import annotations

from typing import Any

from tracekit._fake.anthropic_wire import retry_headers
from tracekit._fake.replies import ErrorReply, MessageReply, Text, Thinking, ToolUse
from tracekit._fake.request import FakeRequest
from tracekit._fake.wire import (
    FakeIds,
    WireResponse,
    apply_stream_fault,
    dumps,
    fake_signature,
    fake_tokens,
    reply_usage,
    split_text,
    thinking_tokens,
)
from tracekit.constants import JSON_CONTENT_TYPE, SSE_CONTENT_TYPE
from tracekit.providers import gemini

#: Anthropic stop reason -> Gemini finishReason.
FINISH_REASONS = {"max_tokens": "MAX_TOKENS", "refusal": "SAFETY"}


def render_message(reply: MessageReply, request: FakeRequest, ids: FakeIds) -> WireResponse:
    """``reply`` as a ``generateContent`` response, or as the chunks of ``streamGenerateContent``."""
    if (error := reply.http_error(request.stream)) is not None:
        return render_error(error)
    parts = [_part(block) for block in reply.content if isinstance(block, Text | Thinking | ToolUse)]
    head = {"modelVersion": reply.model or request.model or "fake-model", "responseId": ids.next("resp_fake_")}
    ending = {"finishReason": FINISH_REASONS.get(reply.resolved_stop_reason, "STOP"), "index": 0}
    usage = {"usageMetadata": _usage(reply, request)}
    if not request.stream:
        candidate = {"content": {"parts": parts, "role": "model"}, **ending}
        body = {"candidates": [candidate], **usage, **head}
        return WireResponse(200, {"content-type": JSON_CONTENT_TYPE, **reply.headers}, body=dumps(body))
    pieces = [piece for part in parts for piece in _pieces(part, reply.chunk_size)] or [{"text": ""}]
    chunks = []
    for position, piece in enumerate(pieces):
        candidate = {"content": {"parts": [piece], "role": "model"}, "index": 0}
        last = position == len(pieces) - 1
        if last:
            candidate.update(ending)
        chunks.append({"candidates": [candidate], **(usage if last else {}), **head})
    headers = {"content-type": SSE_CONTENT_TYPE, "cache-control": "no-cache", **reply.headers}
    response = WireResponse(200, headers, events=[_frame(dumps(chunk)) for chunk in chunks])
    error = reply.fault.error if reply.fault is not None else None
    error_frame = _frame(dumps(gemini.error_body(error.status, error.message))) if error is not None else None
    return apply_stream_fault(response, reply.fault, error_frame)


def render_error(error: ErrorReply) -> WireResponse:
    """``error`` as the API's error body: ``{"error": {"code", "message", "status"}}``."""
    headers = {"content-type": JSON_CONTENT_TYPE, **retry_headers(error), **error.headers}
    return WireResponse(error.status, headers, body=dumps(gemini.error_body(error.status, error.message)))


def render_count(request: FakeRequest) -> WireResponse:
    """A ``countTokens`` answer: ``{"totalTokens"}``, the fake count of the request's contents."""
    body = request.body if isinstance(request.body, dict) else {}
    counted = {key: body.get(key) for key in ("contents", "generateContentRequest") if key in body}
    return WireResponse(200, {"content-type": JSON_CONTENT_TYPE},
                        body=dumps({"totalTokens": fake_tokens(dumps(counted).decode())}))  # fmt: skip


def _part(block: Text | Thinking | ToolUse) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"text": block.text}
    if isinstance(block, Thinking):
        return {"text": block.thinking, "thought": True,
                "thoughtSignature": block.signature or fake_signature(block.thinking)}  # fmt: skip
    call: dict[str, Any] = {"name": block.name, "args": dict(block.input)}
    if block.id is not None:
        call["id"] = block.id
    return {"functionCall": call}


def _pieces(part: dict[str, Any], size: int) -> list[dict[str, Any]]:
    """A part as the stream sends it: a text in pieces (the signature with the last), anything else whole."""
    if "functionCall" in part:
        return [part]
    texts = split_text(part["text"], size)
    pieces: list[dict[str, Any]] = [{"text": text, **({"thought": True} if part.get("thought") else {})}
                                    for text in texts]  # fmt: skip
    if "thoughtSignature" in part:
        pieces[-1]["thoughtSignature"] = part["thoughtSignature"]
    return pieces


def _usage(reply: MessageReply, request: FakeRequest) -> dict[str, int]:
    usage = reply_usage(reply, request)
    cached = usage["cache_read_input_tokens"]
    prompt = usage["input_tokens"] + cached + usage["cache_creation_input_tokens"]
    thoughts = thinking_tokens(reply)
    candidates = max(usage["output_tokens"] - thoughts, 0)
    counts = {"promptTokenCount": prompt, "candidatesTokenCount": candidates,
              "totalTokenCount": prompt + candidates + thoughts}  # fmt: skip
    if thoughts:
        counts["thoughtsTokenCount"] = thoughts
    if cached:
        counts["cachedContentTokenCount"] = cached
    return counts


def _frame(data: bytes) -> bytes:
    return b"data: " + data + b"\r\n\r\n"
