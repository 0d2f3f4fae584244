"""Server-sent events: an incremental parser (bytes in, events out), an encoder, and the raw bytes cut at
event boundaries (``EventSplitter``: for stream faults and replay timing; ``base.split_stream`` cuts a whole
stream).

The parser follows the WHATWG event-stream rules: lines end with CRLF, LF or CR (a CR at the end of
one chunk and an LF at the start of the next are one line break); a line starting with ``:`` is a
comment; ``data`` lines of one event are joined with ``\\n``; a blank line dispatches the event. Chunks
may split an event, a line, or a multi-byte UTF-8 character anywhere.

At the end of the stream an event not closed by a blank line is dropped, as the specification and the
official SDKs' decoders do; ``close(flush_incomplete=True)`` dispatches it instead, and
``has_incomplete`` tells whether there is one (a stream cut mid-event).

Example::

    parser = SSEParser()
    for chunk in response_chunks:
        for event in parser.feed(chunk):
            print(event.event, event.json())
    events = parser.close()
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event: its ``event`` name (None when the stream gave none), data, id and retry."""

    data: str
    event: str | None = None
    id: str | None = None
    retry: int | None = None

    def json(self) -> Any:
        """The data parsed as JSON (raises ``orjson.JSONDecodeError`` when it is not)."""
        return orjson.loads(self.data)


class SSEParser:
    """Turns byte chunks of an event stream into ``ServerSentEvent`` values, incrementally."""

    def __init__(self) -> None:
        self._buffer = b""
        self._after_cr = False
        self._started = False
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Consume one chunk; returns the events completed by it (possibly none)."""
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the LF of a CRLF split across chunks
        self._after_cr = False
        data = self._buffer + chunk
        if not self._started:
            if len(data) < len(_BOM) and _BOM.startswith(data):
                self._buffer = data
                return []
            self._started = True
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
        events: list[ServerSentEvent] = []
        start = 0
        length = len(data)
        while True:
            cr = data.find(b"\r", start)
            lf = data.find(b"\n", start)
            if cr < 0 and lf < 0:
                break
            if cr < 0 or (0 <= lf < cr):
                end, next_start = lf, lf + 1
            elif cr + 1 < length:
                end, next_start = cr, cr + 2 if data[cr + 1 : cr + 2] == b"\n" else cr + 1
            else:
                end, next_start = cr, cr + 1
                self._after_cr = True
            event = self._line(data[start:end])
            if event is not None:
                events.append(event)
            start = next_start
        self._buffer = data[start:]
        return events

    @property
    def has_incomplete(self) -> bool:
        """True when bytes of an event not yet closed by a blank line are pending."""
        return bool(self._buffer.strip() or self._data or self._event is not None)

    def close(self, *, flush_incomplete: bool = False) -> list[ServerSentEvent]:
        """End of stream: drop an event not closed by a blank line, or dispatch it when asked to."""
        events: list[ServerSentEvent] = []
        if flush_incomplete:
            if self._buffer:
                event = self._line(self._buffer)
                if event is not None:
                    events.append(event)
            event = self._dispatch()
            if event is not None:
                events.append(event)
        self._buffer = b""
        self._event, self._data, self._retry = None, [], None
        return events

    def _line(self, raw: bytes) -> ServerSentEvent | None:
        if not raw:
            return self._dispatch()
        line = raw.decode("utf-8", errors="replace")
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        if not self._data:
            self._event = None
            return None
        event = ServerSentEvent(data="\n".join(self._data), event=self._event, id=self._id, retry=self._retry)
        self._event = None
        self._data = []
        self._retry = None
        return event


def parse_sse(data: bytes | Iterable[bytes], *, flush_incomplete: bool = False) -> list[ServerSentEvent]:
    """All events of a whole stream (bytes, or an iterable of byte chunks)."""
    return list(iter_sse([data] if isinstance(data, bytes) else data, flush_incomplete=flush_incomplete))


def iter_sse(chunks: Iterable[bytes], *, flush_incomplete: bool = False) -> Iterator[ServerSentEvent]:
    """Events of a stream given as byte chunks, as soon as each is complete."""
    parser = SSEParser()
    for chunk in chunks:
        yield from parser.feed(chunk)
    yield from parser.close(flush_incomplete=flush_incomplete)


def encode_event(data: str, event: str | None = None, id: str | None = None) -> bytes:
    """One event as wire bytes (``event:`` line, one ``data:`` line per line of ``data``, blank line)."""
    lines = []
    if event is not None:
        lines.append(f"event: {event}")
    if id is not None:
        lines.append(f"id: {id}")
    lines.extend(f"data: {part}" for part in data.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def encode_json_event(value: Any, event: str | None = None) -> bytes:
    """One event whose data is ``value`` as compact JSON (UTF-8, not escaped)."""
    return encode_event(orjson.dumps(value).decode("utf-8"), event=event)


# -- raw bytes cut at event boundaries ------------------------------------------------------------------

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

