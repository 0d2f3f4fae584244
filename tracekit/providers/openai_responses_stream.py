"""Responses API streams: events accumulated into a response, and a response split into events.

The accumulation mirrors openai-python's ``ResponseStreamState.accumulate_event``
(``lib/streaming/responses/_responses.py``; read, not copied):

- ``response.created`` starts the snapshot (its ``output``, or none);
- ``response.output_item.added`` appends its item (an event without an item is skipped);
  ``response.content_part.added`` appends a part to a message item; ``response.output_text.delta`` and
  ``response.function_call_arguments.delta`` grow the text and the arguments; the reasoning summary and
  other deltas are not accumulated (the item's ``done`` event carries them whole);
- ``response.output_item.done`` replaces the item at its ``output_index``; a later
  ``response.created`` / ``queued`` / ``in_progress`` whose output names a finished item by its identity
  (type, id, call_id) replaces it again;
- ``response.completed`` gives the final response as sent, and when it carries no ``output``, the finished
  items in index order; ``response.failed`` and ``response.incomplete`` likewise, an item not finished
  being taken as it grew.

A stream cut before its final event assembles like a failed one: each item finished or as far as it grew.
An ``error`` event gives the error body ``{"error": {...}}``: the live API nests the fields under
``error`` (captured frames in openai/openai-dotnet#881 and Effect-TS/effect#7262), the API reference puts
``code`` / ``message`` / ``param`` at the top level; both are read.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from tracekit.providers.base import AssemblerBase, event_object
from tracekit.providers.sse import ServerSentEvent, encode_json_event

_LIFECYCLE_START = ("response.created", "response.queued", "response.in_progress")
_TERMINAL = ("response.completed", "response.failed", "response.incomplete")
#: Output item types whose identity is their call_id alone (the SDK's ``_output_identity``).
_CALL_ID_ONLY = ("function_call", "custom_tool_call", "shell_call", "shell_call_output")


def _identity(item: dict[str, Any]) -> tuple[Any, Any, Any]:
    kind = item.get("type")
    if kind in _CALL_ID_ONLY:
        return kind, None, item.get("call_id")
    return kind, item.get("id"), item.get("call_id")


class ResponsesStreamAssembler(AssemblerBase):
    """Accumulates Responses API stream events into the response body, as the official SDK does.

    ``error`` holds ``{"error": {...}}`` after an ``error`` event, or the failed response after
    ``response.failed``; ``done`` turns true at ``response.completed`` / ``failed`` / ``incomplete``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._snapshot: dict[str, Any] | None = None
        self._items: dict[int, dict[str, Any]] = {}
        self._finished: dict[int, dict[str, Any]] = {}
        self._final: dict[str, Any] | None = None

    def _snapshot_body(self) -> dict[str, Any]:
        if self._final is not None:
            return copy.deepcopy(self._final)
        if self._snapshot is None:
            return {}
        body = copy.deepcopy(self._snapshot)
        body["output"] = self._grown_output()
        return body

    def _grown_output(self) -> list[dict[str, Any]]:
        indexes = sorted(self._items.keys() | self._finished.keys())
        return [copy.deepcopy(self._finished[index] if index in self._finished else self._items[index])
                for index in indexes]

    def feed(self, event: ServerSentEvent) -> None:
        """Apply one event (unknown events and events before the first response are ignored)."""
        data = event_object(event)
        if data is None:
            return
        name = str(data.get("type") or event.event or "")
        if name == "error":
            nested = data.get("error")
            error = nested if isinstance(nested, dict) else {k: v for k, v in data.items()
                                                              if k not in ("type", "sequence_number")}
            self._error = {"error": error}
            return
        response = data.get("response")
        if self._snapshot is None:
            if isinstance(response, dict):
                self._snapshot = dict(response)
                output = self._snapshot.get("output")
                self._snapshot["output"] = output if isinstance(output, list) else []
                self._items = dict(enumerate(self._snapshot["output"]))
            if name not in _TERMINAL:
                return
        if name in _LIFECYCLE_START and isinstance(response, dict):
            self._replace_finished(response.get("output"))
        elif name in _TERMINAL and isinstance(response, dict):
            self._finish(name, response)
        elif name == "response.output_item.added":
            self._add_item(data)
        elif name == "response.output_item.done":
            item, index = data.get("item"), data.get("output_index")
            if isinstance(item, dict) and isinstance(index, int):
                self._finished[index] = item
        else:
            self._apply_delta(name, data)

    def _replace_finished(self, output: Any) -> None:
        positions = {_identity(item): index for index, item in self._finished.items()}
        for item in output if isinstance(output, list) else []:
            index = positions.get(_identity(item)) if isinstance(item, dict) else None
            if index is not None:
                self._finished[index] = item

    def _add_item(self, data: dict[str, Any]) -> None:
        item, index = data.get("item"), data.get("output_index")
        if not isinstance(item, dict) or not isinstance(index, int) or self._snapshot is None:
            return
        if item.get("type") == "message" and not isinstance(item.get("content"), list):
            item["content"] = []
        self._snapshot["output"].append(item)
        self._items[index] = item

    def _apply_delta(self, name: str, data: dict[str, Any]) -> None:
        index = data.get("output_index")
        item = self._items.get(index) if isinstance(index, int) else None
        if item is None:
            return
        kind = item.get("type")
        if name == "response.content_part.added" and kind == "message":
            part = data.get("part")
            item["content"].append(part if isinstance(part, dict) else {})
        elif name == "response.output_text.delta" and kind == "message":
            position = data.get("content_index")
            content = item["content"]
            part = content[position] if isinstance(position, int) and 0 <= position < len(content) else {}
            if part.get("type") == "output_text":
                part["text"] = str(part.get("text") or "") + str(data.get("delta") or "")
        elif name == "response.function_call_arguments.delta" and kind == "function_call":
            item["arguments"] = str(item.get("arguments") or "") + str(data.get("delta") or "")

    def _finish(self, name: str, response: dict[str, Any]) -> None:
        final = response
        if final.get("output") is None:
            if name == "response.completed":
                final["output"] = [self._finished[index] for index in sorted(self._finished)]
            else:
                final["output"] = self._grown_output()
        self._final = final
        self._done = True
        if name == "response.failed":
            self._error = final


# -- a response as the events that assemble back into it ------------------------------------------------


class _Events:
    """SSE frames with ``type`` and ``sequence_number`` filled in, in order (each encoded at once, so the
    body's parts are used without copies)."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def add(self, event_type: str, /, **fields: Any) -> None:
        event = {"type": event_type, **fields, "sequence_number": len(self.frames)}
        self.frames.append(encode_json_event(event, event_type))


def render_events(body: dict[str, Any]) -> bytes:
    """A response body as the SSE bytes the API would have streamed (``response.created`` first, then
    each output item's events, then ``response.completed`` / ``incomplete`` / ``failed`` with the body)."""
    events = _Events()
    start = {**body, "status": "in_progress", "output": []}
    for key in ("usage", "error", "incomplete_details", "completed_at"):
        if key in start:
            start[key] = None
    events.add("response.created", response=start)
    events.add("response.in_progress", response=start)
    for index, item in enumerate(body.get("output") or []):
        if isinstance(item, dict):
            _item_events(events, index, item)
    status = body.get("status")
    final = f"response.{status}" if status in ("failed", "incomplete") else "response.completed"
    events.add(final, response=body)
    return b"".join(events.frames)


def render_error_event(body: dict[str, Any]) -> bytes:
    """An error body as the live API's in-stream ``error`` event (fields nested under ``error``)."""
    events = _Events()
    events.add("error", error=body.get("error"))
    return b"".join(events.frames)


def _item_events(events: _Events, index: int, item: dict[str, Any]) -> None:
    kind = item.get("type")
    item_id = item.get("id")
    where = {"item_id": item_id, "output_index": index}
    if kind == "message" and isinstance(item.get("content"), list):
        events.add("response.output_item.added", output_index=index,
                   item={**item, "status": "in_progress", "content": []})
        for position, part in enumerate(item["content"]):
            _part_events(events, where, position, part if isinstance(part, dict) else {})
    elif kind == "function_call":
        arguments = item.get("arguments")
        text = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
        events.add("response.output_item.added", output_index=index,
                   item={**item, "status": "in_progress", "arguments": ""})
        if text:
            events.add("response.function_call_arguments.delta", **where, delta=text)
        events.add("response.function_call_arguments.done", **where, name=item.get("name"), arguments=text)
    elif kind == "reasoning":
        summary = item["summary"] if isinstance(item.get("summary"), list) else []
        events.add("response.output_item.added", output_index=index, item={**item, "summary": []})
        for position, part in enumerate(summary):
            text = str(part.get("text") or "") if isinstance(part, dict) else ""
            at = {**where, "summary_index": position}
            events.add("response.reasoning_summary_part.added", **at, part={"type": "summary_text", "text": ""})
            if text:
                events.add("response.reasoning_summary_text.delta", **at, delta=text)
            events.add("response.reasoning_summary_text.done", **at, text=text)
            events.add("response.reasoning_summary_part.done", **at, part=part)
    else:
        events.add("response.output_item.added", output_index=index, item=item)
    events.add("response.output_item.done", output_index=index, item=item)


def _part_events(events: _Events, where: dict[str, Any], position: int, part: dict[str, Any]) -> None:
    at = {**where, "content_index": position}
    kind = part.get("type")
    if kind == "output_text":
        text = str(part.get("text") or "")
        events.add("response.content_part.added", **at, part={**part, "text": "", "annotations": []})
        if text:
            events.add("response.output_text.delta", **at, delta=text, logprobs=[])
        events.add("response.output_text.done", **at, text=text, logprobs=part.get("logprobs") or [])
    elif kind == "refusal":
        refusal = str(part.get("refusal") or "")
        events.add("response.content_part.added", **at, part={**part, "refusal": ""})
        if refusal:
            events.add("response.refusal.delta", **at, delta=refusal)
        events.add("response.refusal.done", **at, refusal=refusal)
    else:
        events.add("response.content_part.added", **at, part=part)
    events.add("response.content_part.done", **at, part=part)
