"""Cutting SSE bytes at event boundaries (for stream faults and replay timing)."""

from __future__ import annotations

import re

_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


class EventSplitter:
    """Feeds byte chunks, returns whole events (each with its blank line), keeping a partial tail."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The events completed by ``chunk``."""
        data = self._buffer + chunk
        events = []
        start = 0
        for match in _EVENT_END.finditer(data):
            events.append(data[start : match.end()])
            start = match.end()
        self._buffer = data[start:]
        return events

    def rest(self) -> bytes:
        """Bytes after the last complete event."""
        return self._buffer


def split_events(data: bytes) -> list[bytes]:
    """A whole stream as its events (a trailing incomplete event is kept as the last item)."""
    splitter = EventSplitter()
    events = splitter.feed(data)
    if splitter.rest():
        events.append(splitter.rest())
    return events
