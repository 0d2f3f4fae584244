"""ConverseStream's events: parsing the event stream, assembling it into the Converse response body, and
rendering a body as the events that assemble back to it. Used through ``tracekit.providers.bedrock_converse``.

The events, in the order Bedrock sends them (``ConverseStreamOutput`` in the Bedrock Runtime API
reference, https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStreamOutput.html):
``messageStart`` (``role``); per content block an optional ``contentBlockStart`` (a tool call's
``toolUseId`` and ``name``), ``contentBlockDelta`` (``text``, ``toolUse.input`` JSON text,
``reasoningContent`` ``text`` / ``signature`` / ``redactedContent``) and ``contentBlockStop``, each naming its
``contentBlockIndex``; ``messageStop`` (``stopReason``); ``metadata`` (``usage``, ``metrics``), the last.
A failure mid-way is an ``exception`` message (``internalServerException``, ``throttlingException``, ...).
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from tracekit.providers.base import AssemblerBase, event_object
from tracekit.providers.bedrock_base import (
    EXCEPTION_SUFFIX,
    broken_stream_event,
    error_event_payload,
    parse_frames,
)
from tracekit.providers.eventstream import FrameSplitter, event_frame, exception_frame
from tracekit.providers.sse import ServerSentEvent
from tracekit.trace.canonical import parse_json_arguments

#: Characters of text per ``contentBlockDelta`` when a body is rendered as a stream.
_PIECE = 64


class ConverseEventParser:
    """Event-stream bytes in, one ``ServerSentEvent`` per message out: ``event`` is its ``:event-type`` (or
    ``:exception-type``), ``data`` its JSON payload. Bytes that are not an event stream end it with one
    ``invalidStreamException``."""

    def __init__(self) -> None:
        self._splitter = FrameSplitter()
        self._broken = False

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events ``chunk`` completes."""
        if self._broken:
            return []
        messages = parse_frames(self._splitter, chunk)
        if isinstance(messages, str):
            self._broken = True
            return [broken_stream_event(messages)]
        return [ServerSentEvent(data=message.payload.decode("utf-8", "replace"), event=message.event_type)
                for message in messages]  # fmt: skip

    def close(self) -> list[ServerSentEvent]:
        """Nothing: a partial message at the end is no event."""
        return []


class ConverseStreamAssembler(AssemblerBase):
    """Accumulates ConverseStream events into ``{"output": {"message"}, "stopReason", "usage", "metrics"}``
    (``done`` at ``metadata``, the last event; an exception event is the stream's error)."""

    def __init__(self) -> None:
        super().__init__()
        self._role: str | None = None
        self._blocks: dict[int, dict[str, Any]] = {}
        self._pieces: dict[tuple[int, str], list[str]] = {}
        self._rest: dict[str, Any] = {}

    def feed(self, event: ServerSentEvent) -> None:
        """Apply one event (unknown ones are ignored)."""
        data = event_object(event)
        name = event.event or ""
        if name.endswith(EXCEPTION_SUFFIX):
            message = str((data or {}).get("message", event.data))
            self._error = {"message": message, "__type": name[:1].upper() + name[1:]}
            return
        if data is None:
            return
        index = data.get("contentBlockIndex")
        if name == "messageStart":
            self._role = str(data.get("role", "assistant"))
        elif name == "contentBlockStart" and isinstance(index, int):
            start = data.get("start")
            call = start.get("toolUse") if isinstance(start, dict) else None
            if isinstance(call, dict):
                self._blocks[index] = {"toolUse": {"toolUseId": call.get("toolUseId"), "name": call.get("name")}}
        elif name == "contentBlockDelta" and isinstance(index, int):
            self._delta(index, data.get("delta"))
        elif name == "messageStop":
            self._rest["stopReason"] = data.get("stopReason")
            if "additionalModelResponseFields" in data:
                self._rest["additionalModelResponseFields"] = data["additionalModelResponseFields"]
        elif name == "metadata":
            self._rest.update({key: value for key, value in data.items() if key != "p"})
            self._done = True

    def _delta(self, index: int, delta: Any) -> None:
        if not isinstance(delta, dict):
            return
        if "text" in delta:
            self._blocks.setdefault(index, {"text": ""})
            self._piece(index, "text", delta["text"])
        elif isinstance(delta.get("toolUse"), dict):
            self._blocks.setdefault(index, {"toolUse": {}})
            self._piece(index, "input", delta["toolUse"].get("input", ""))
        elif isinstance(delta.get("reasoningContent"), dict):
            reasoning = delta["reasoningContent"]
            if "redactedContent" in reasoning:
                self._blocks[index] = {"reasoningContent": {"redactedContent": reasoning["redactedContent"]}}
                return
            self._blocks.setdefault(index, {"reasoningContent": {"reasoningText": {"text": ""}}})
            if "text" in reasoning:
                self._piece(index, "reasoning", reasoning["text"])
            if "signature" in reasoning:
                self._blocks[index]["reasoningContent"]["reasoningText"]["signature"] = reasoning["signature"]

    def _piece(self, index: int, field: str, text: Any) -> None:
        self._pieces.setdefault((index, field), []).append(str(text))

    def _snapshot_body(self) -> dict[str, Any]:
        if self._role is None and not self._blocks:
            return {}
        blocks = copy.deepcopy(self._blocks)
        for (index, field), pieces in self._pieces.items():
            joined = "".join(pieces)
            block = blocks[index]
            if field == "text":
                block["text"] = joined
            elif field == "reasoning":
                block["reasoningContent"]["reasoningText"]["text"] = joined
            elif "toolUse" in block:
                value, ok = parse_json_arguments(joined) if joined else ({}, True)
                block["toolUse"]["input"] = value if ok else joined
        content = [blocks[index] for index in sorted(blocks)]
        return {"output": {"message": {"role": self._role or "assistant", "content": content}}, **self._rest}


def render_events(body: dict[str, Any], error: dict[str, Any] | None) -> bytes:
    """``body`` as ConverseStream's event stream; an error as the one ``exception`` message that ends it."""
    if error is not None:
        name, payload = error_event_payload(str(error.get("type", "")), str(error.get("message", "")))
        return exception_frame(name, payload)
    output = body.get("output")
    output = output if isinstance(output, dict) else {}
    message = output.get("message")
    message = message if isinstance(message, dict) else {}
    frames = [event_frame("messageStart", orjson.dumps({"role": message.get("role", "assistant")}))]
    for index, block in enumerate(message.get("content") or []):
        frames.extend(_block_events(index, block))
        frames.append(_event("contentBlockStop", {"contentBlockIndex": index}))
    stop: dict[str, Any] = {"stopReason": body.get("stopReason", "end_turn")}
    if "additionalModelResponseFields" in body:
        stop["additionalModelResponseFields"] = body["additionalModelResponseFields"]
    frames.append(_event("messageStop", stop))
    rest = {key: value for key, value in body.items() if key not in ("output", "stopReason",
                                                                    "additionalModelResponseFields")}  # fmt: skip
    frames.append(_event("metadata", {"usage": {}, "metrics": {}, **rest}))
    return b"".join(frames)


def _block_events(index: int, block: Any) -> list[bytes]:
    if not isinstance(block, dict):
        return []
    if "toolUse" in block:
        call = block["toolUse"]
        start = {"toolUse": {"toolUseId": call.get("toolUseId"), "name": call.get("name")}}
        raw = call.get("input")
        text = raw if isinstance(raw, str) else orjson.dumps(raw if raw is not None else {}).decode()
        return [_event("contentBlockStart", {"contentBlockIndex": index, "start": start}),
                _event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": text}}})]
    if "text" in block:
        text = str(block["text"])
        pieces = [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)] or [""]
        return [_event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}}) for piece in pieces]
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, dict):
        if "redactedContent" in reasoning:
            delta = {"reasoningContent": {"redactedContent": reasoning["redactedContent"]}}
            return [_event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})]
        said = reasoning.get("reasoningText") or {}
        events = [_event("contentBlockDelta", {"contentBlockIndex": index,
                                               "delta": {"reasoningContent": {"text": said.get("text", "")}}})]
        if "signature" in said:
            signature = {"reasoningContent": {"signature": said["signature"]}}
            events.append(_event("contentBlockDelta", {"contentBlockIndex": index, "delta": signature}))
        return events
    return []


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return event_frame(name, orjson.dumps(payload))
