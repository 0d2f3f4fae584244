"""Replies rendered as the OpenAI Responses API sends them: JSON, SSE events, error bodies.

The response object and the event flow follow the API reference ("Responses" and "Streaming events"):
``response.created`` and ``response.in_progress`` (the response with status ``in_progress``, no output,
no usage); per output item ``response.output_item.added``, its deltas and ``response.output_item.done``;
then ``response.completed`` (or ``response.incomplete`` when the reply stopped at ``max_tokens``) with the
whole response. Every event carries ``type`` and a ``sequence_number`` counting from 0.

- thinking -> a ``reasoning`` item whose summary is the thinking text (``reasoning_summary_part`` and
  ``reasoning_summary_text`` events); ``encrypted_content`` (a fake, deterministic) only when the request
  asks for ``include: ["reasoning.encrypted_content"]``; redacted thinking -> a reasoning item with no
  summary whose ``encrypted_content`` is the block's data;
- consecutive text blocks -> one ``message`` item, one ``output_text`` part each (``content_part`` and
  ``output_text`` events);
- a tool call -> a ``function_call`` item (``fc_fake_...`` id, ``call_fake_...`` call_id) whose arguments
  stream as ``response.function_call_arguments.delta`` fragments.

Errors are the Chat Completions error body. An in-stream error is an ``error`` event with the fields
nested under ``error``, as the live API sends it (captured in openai/openai-dotnet#881).
"""

from __future__ import annotations

from typing import Any

from tracekit._fake.openai_wire import error_object, render_error, token_counts
from tracekit._fake.replies import MessageReply, RedactedThinking, Text, Thinking, ToolUse
from tracekit._fake.request import FakeRequest
from tracekit._fake.wire import (
    FAKE_CREATED,
    FakeIds,
    WireResponse,
    apply_stream_fault,
    dumps,
    fake_signature,
    split_json,
    split_text,
    tool_input_json,
)
from tracekit.constants import JSON_CONTENT_TYPE, SSE_CONTENT_TYPE

ENCRYPTED_REASONING = "reasoning.encrypted_content"

#: Request fields a response echoes, with the value the API reports when the request leaves them out.
_ECHOED: dict[str, Any] = {
    "instructions": None,
    "max_output_tokens": None,
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "reasoning": {"effort": None, "summary": None},
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}},
    "tool_choice": "auto",
    "tools": [],
    "top_p": 1.0,
    "truncation": "disabled",
    "user": None,
    "metadata": {},
}


def render_message(reply: MessageReply, request: FakeRequest, ids: FakeIds) -> WireResponse:
    """``reply`` as a Responses API response to ``request``: JSON or SSE as the request asked."""
    request_id = ids.next("req_fake_")
    if (error := reply.http_error(request.stream)) is not None:
        return render_error(error, request_id)
    body = request.body if isinstance(request.body, dict) else {}
    output = _output_items(reply, body, ids)
    incomplete = reply.resolved_stop_reason == "max_tokens"
    response: dict[str, Any] = {
        "id": ids.next("resp_fake_"),
        "object": "response",
        "created_at": FAKE_CREATED,
        "status": "incomplete" if incomplete else "completed",
        "background": False,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "model": reply.model or request.model or "fake-model",
        "output": output,
        "service_tier": "default",
        **{key: body.get(key, default) for key, default in _ECHOED.items()},
        "usage": _usage(reply, request),
    }
    headers = {"x-request-id": request_id, "openai-version": "2020-10-01", **reply.headers}
    if not request.stream:
        wire = WireResponse(200, {"content-type": JSON_CONTENT_TYPE, **headers}, body=dumps(response))
    else:
        headers = {"content-type": SSE_CONTENT_TYPE, "cache-control": "no-cache", **headers}
        wire = WireResponse(200, headers, events=_events(response, reply.chunk_size))
    wire.message = response
    error_frame = None
    if reply.fault is not None and reply.fault.error is not None:
        after = max(0, min(reply.fault.after_events, len(wire.events or []) - 1))
        error_frame = _frame({"type": "error", "error": error_object(reply.fault.error), "sequence_number": after})
    return apply_stream_fault(wire, reply.fault, error_frame)


def _output_items(reply: MessageReply, body: dict[str, Any], ids: FakeIds) -> list[dict[str, Any]]:
    include = body["include"] if isinstance(body.get("include"), list) else []
    items: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    for block in reply.content:
        if isinstance(block, Text):
            texts.append({"type": "output_text", "annotations": [], "logprobs": [], "text": block.text})
            continue
        if texts:
            items.append(_message_item(texts, ids))
            texts = []
        if isinstance(block, ToolUse):
            items.append({"id": ids.next("fc_fake_"), "type": "function_call", "status": "completed",
                          "arguments": tool_input_json(block), "call_id": block.id or ids.next("call_fake_"),
                          "name": block.name})  # fmt: skip
        elif isinstance(block, Thinking):
            item: dict[str, Any] = {"id": ids.next("rs_fake_"), "type": "reasoning",
                                    "summary": [{"type": "summary_text", "text": block.thinking}]}
            if ENCRYPTED_REASONING in include:
                item["encrypted_content"] = block.signature or fake_signature(block.thinking)
            items.append(item)
        elif isinstance(block, RedactedThinking):
            items.append({"id": ids.next("rs_fake_"), "type": "reasoning", "summary": [],
                          "encrypted_content": block.data})
    if texts:
        items.append(_message_item(texts, ids))
    return items


def _message_item(parts: list[dict[str, Any]], ids: FakeIds) -> dict[str, Any]:
    return {"id": ids.next("msg_fake_"), "type": "message", "status": "completed", "content": parts,
            "role": "assistant"}


def _usage(reply: MessageReply, request: FakeRequest) -> dict[str, Any]:
    counts = token_counts(reply, request)
    return {
        "input_tokens": counts.input,
        "input_tokens_details": {"cache_write_tokens": counts.cache_written, "cached_tokens": counts.cached},
        "output_tokens": counts.output,
        "output_tokens_details": {"reasoning_tokens": counts.reasoning},
        "total_tokens": counts.input + counts.output,
    }


class _Stream:
    """The event frames of one response, numbered as they are added."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def add(self, event_type: str, /, **fields: Any) -> None:
        self.frames.append(_frame({"type": event_type, **fields, "sequence_number": len(self.frames)}))


def _events(response: dict[str, Any], chunk_size: int) -> list[bytes]:
    stream = _Stream()
    start = {**response, "status": "in_progress", "incomplete_details": None, "output": [], "usage": None}
    stream.add("response.created", response=start)
    stream.add("response.in_progress", response=start)
    for index, item in enumerate(response["output"]):
        where = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            stream.add("response.output_item.added", output_index=index,
                       item={**item, "status": "in_progress", "content": []})
            for position, part in enumerate(item["content"]):
                at = {**where, "content_index": position}
                stream.add("response.content_part.added", **at, part={**part, "text": ""})
                for piece in split_text(part["text"], chunk_size):
                    if piece:
                        stream.add("response.output_text.delta", **at, delta=piece, logprobs=[])
                stream.add("response.output_text.done", **at, text=part["text"], logprobs=[])
                stream.add("response.content_part.done", **at, part=part)
        elif item["type"] == "function_call":
            stream.add("response.output_item.added", output_index=index,
                       item={**item, "status": "in_progress", "arguments": ""})
            for piece in split_json(item["arguments"], chunk_size):
                stream.add("response.function_call_arguments.delta", **where, delta=piece)
            stream.add("response.function_call_arguments.done", **where, arguments=item["arguments"])
        else:
            added = {key: value for key, value in item.items() if key != "encrypted_content"}
            stream.add("response.output_item.added", output_index=index, item={**added, "summary": []})
            for position, part in enumerate(item["summary"]):
                at = {**where, "summary_index": position}
                stream.add("response.reasoning_summary_part.added", **at, part={**part, "text": ""})
                for piece in split_text(part["text"], chunk_size):
                    stream.add("response.reasoning_summary_text.delta", **at, delta=piece)
                stream.add("response.reasoning_summary_text.done", **at, text=part["text"])
                stream.add("response.reasoning_summary_part.done", **at, part=part)
        stream.add("response.output_item.done", output_index=index, item=item)
    final = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    stream.add(final, response=response)
    return stream.frames


def _frame(event: dict[str, Any]) -> bytes:
    return b"event: " + str(event["type"]).encode() + b"\ndata: " + dumps(event) + b"\n\n"
