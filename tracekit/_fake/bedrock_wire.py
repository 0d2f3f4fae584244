"""Replies rendered as Amazon Bedrock sends them: Converse and ConverseStream, InvokeModel and
InvokeModelWithResponseStream with Anthropic Messages bodies, and AWS errors.

Streams are AWS event streams (``application/vnd.amazon.eventstream``, encoded by
``tracekit.providers.eventstream``). ConverseStream sends ``messageStart``; per block a ``contentBlockStart``
for a tool call only (as Bedrock does), ``contentBlockDelta`` pieces of ``chunk_size`` characters and
``contentBlockStop``; ``messageStop`` with the stop reason; ``metadata`` with usage and metrics (the shapes of
the Bedrock Runtime API reference, ``ConverseStreamOutput``). InvokeModelWithResponseStream sends each event
of the Messages API stream (``anthropic_wire``, pings left out) as a ``chunk`` whose ``bytes`` are the event's
JSON in base64. Errors are the HTTP status with ``x-amzn-ErrorType`` and ``{"message": ...}``; a stream that
fails mid-way ends with an ``exception`` message.
"""

from __future__ import annotations

import base64
from typing import Any

from tracekit._fake import anthropic_wire, wire
from tracekit._fake.replies import Block, ErrorReply, MessageReply, RedactedThinking, Text, Thinking, ToolUse
from tracekit._fake.request import FakeRequest
from tracekit._fake.wire import FakeIds, WireResponse
from tracekit.constants import JSON_CONTENT_TYPE
from tracekit.providers.bedrock_base import ERROR_TYPES, error_event_payload
from tracekit.providers.eventstream import CONTENT_TYPE, event_frame, exception_frame
from tracekit.providers.sse import parse_sse

#: What Bedrock appends to the error name in ``x-amzn-ErrorType`` (botocore keeps the part before ``:``).
_ERROR_TYPE_SUFFIX = ":http://internal.amazon.com/coral/com.amazon.bedrock/"


def render_converse(reply: MessageReply, request: FakeRequest, ids: FakeIds) -> WireResponse:
    """``reply`` as a Converse (JSON) or ConverseStream (event stream) response to ``request``."""
    if (error := reply.http_error(request.stream)) is not None:
        return render_error(error, ids.next("req-fake-"))
    usage = wire.reply_usage(reply, request)
    counts = {"inputTokens": usage["input_tokens"], "outputTokens": usage["output_tokens"],
              "totalTokens": usage["input_tokens"] + usage["output_tokens"]}  # fmt: skip
    content = [_block_json(block, ids) for block in reply.content]
    stop_reason = reply.resolved_stop_reason
    headers = {"x-amzn-requestid": ids.next("req-fake-"), **reply.headers}
    if not request.stream:
        body = {"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop_reason,
                "usage": counts, "metrics": {"latencyMs": 0}}  # fmt: skip
        return WireResponse(200, {"content-type": JSON_CONTENT_TYPE, **headers}, body=wire.dumps(body))
    events = [_event("messageStart", {"role": "assistant"})]
    for index, (block, block_json) in enumerate(zip(reply.content, content, strict=True)):
        if isinstance(block, ToolUse):
            start = {"toolUse": {"toolUseId": block_json["toolUse"]["toolUseId"], "name": block.name}}
            events.append(_event("contentBlockStart", {"contentBlockIndex": index, "start": start}))
        events.extend(_event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
                      for delta in _deltas(block, block_json, reply.chunk_size))  # fmt: skip
        events.append(_event("contentBlockStop", {"contentBlockIndex": index}))
    events.append(_event("messageStop", {"stopReason": stop_reason}))
    events.append(_event("metadata", {"usage": counts, "metrics": {"latencyMs": 0}}))
    response = WireResponse(200, {"content-type": CONTENT_TYPE, **headers}, events=events)
    return wire.apply_stream_fault(response, reply.fault, _error_frame(reply))


def render_invoke(reply: MessageReply, request: FakeRequest, ids: FakeIds) -> WireResponse:
    """``reply`` as an InvokeModel response (the Messages API's JSON) or InvokeModelWithResponseStream (its
    events in ``chunk`` messages)."""
    if (error := reply.http_error(request.stream)) is not None:
        return render_error(error, ids.next("req-fake-"))
    # The Messages API response of the same reply (JSON or SSE as the path asks), without the fault: the
    # fault is applied to the event stream.
    plain = MessageReply(reply.content, reply.stop_reason, reply.model, reply.usage, reply.chunk_size)
    messages_api = anthropic_wire.render_message(plain, request, ids, ids.next("msg_bdrk_fake_"))
    headers = {"x-amzn-requestid": ids.next("req-fake-"), **reply.headers}
    if not request.stream:
        return WireResponse(200, {"content-type": JSON_CONTENT_TYPE, **headers}, body=messages_api.body,
                            message=messages_api.message)
    frames = [event_frame("chunk", wire.dumps({"bytes": base64.b64encode(event.data.encode()).decode("ascii")}))
              for event in parse_sse(b"".join(messages_api.events or [])) if event.event != "ping"]  # fmt: skip
    response = WireResponse(200, {"content-type": CONTENT_TYPE, **headers}, events=frames,
                            message=messages_api.message)
    return wire.apply_stream_fault(response, reply.fault, _error_frame(reply))


def render_error(error: ErrorReply, request_id: str) -> WireResponse:
    """``error`` as AWS sends it: the status, ``x-amzn-ErrorType`` and ``{"message": ...}``."""
    name = error.type if error.type[:1].isupper() else ERROR_TYPES.get(error.status, "InternalServerException")
    headers = {"content-type": JSON_CONTENT_TYPE, "x-amzn-requestid": request_id,
               "x-amzn-errortype": name + _ERROR_TYPE_SUFFIX, **anthropic_wire.retry_headers(error),
               **error.headers}  # fmt: skip
    return WireResponse(error.status, headers, body=wire.dumps({"message": error.message}))


def _error_frame(reply: MessageReply) -> bytes | None:
    if reply.fault is None or reply.fault.error is None:
        return None
    return exception_frame(*error_event_payload(reply.fault.error.type, reply.fault.error.message))


def _block_json(block: Block, ids: FakeIds) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"text": block.text}
    if isinstance(block, ToolUse):
        return {"toolUse": {"toolUseId": block.id or ids.next("tooluse_fake_"), "name": block.name,
                            "input": dict(block.input)}}  # fmt: skip
    if isinstance(block, Thinking):
        signature = wire.thinking_signature(block)
        return {"reasoningContent": {"reasoningText": {"text": block.thinking, "signature": signature}}}
    assert isinstance(block, RedactedThinking)
    return {"reasoningContent": {"redactedContent": block.data}}


def _deltas(block: Block, block_json: dict[str, Any], chunk_size: int) -> list[dict[str, Any]]:
    pieces = wire.stream_pieces(block, chunk_size)
    if isinstance(block, Text):
        return [{"text": piece} for piece in pieces]
    if isinstance(block, ToolUse):
        return [{"toolUse": {"input": piece}} for piece in pieces]
    if isinstance(block, Thinking):
        text = block_json["reasoningContent"]["reasoningText"]
        deltas = [{"reasoningContent": {"text": piece}} for piece in pieces]
        return [*deltas, {"reasoningContent": {"signature": text["signature"]}}]
    return [{"reasoningContent": {"redactedContent": block_json["reasoningContent"]["redactedContent"]}}]


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return event_frame(name, wire.dumps(payload))
