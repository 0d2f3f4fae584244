"""The AWS event stream (``application/vnd.amazon.eventstream``): the binary framing of Amazon Bedrock's
``ConverseStream`` and ``InvokeModelWithResponseStream`` answers, decoded and encoded.

The format, as AWS publishes it ("Event stream encoding",
https://docs.aws.amazon.com/lexv2/latest/dg/event-stream-encoding.html, and the same page for Transcribe,
https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html): each message is

    total length (4 bytes, big-endian, the whole message) | headers length (4) | prelude CRC32 (4, of the
    8 bytes before it) | headers | payload | message CRC32 (4, of every byte before it)

and each header is ``name length (1) | name (UTF-8) | value type (1) | value``, the value's shape set by its
type: 0 true, 1 false (no bytes), 2 byte (1), 3 short (2), 4 integer (4), 5 long (8), 6 bytes and 7 string
(2-byte length, then the bytes), 8 timestamp (8, milliseconds), 9 UUID (16). CRC32 is the GZIP one
(``zlib.crc32``). A message's ``:message-type`` header is ``event`` (``:event-type`` names it), ``exception``
(``:exception-type``) or ``error`` (``:error-code``, ``:error-message``).

Example::

    frame = encode_message({":event-type": "messageStop", ":content-type": "application/json",
                            ":message-type": "event"}, b'{"stopReason":"end_turn"}')
    parser = EventStreamParser()
    [message] = parser.feed(frame)
    message.headers[":event-type"], message.payload
"""

from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass
from typing import Any

from tracekit.errors import EventStreamError
from tracekit.providers.base import split_stream

CONTENT_TYPE = "application/vnd.amazon.eventstream"
_PRELUDE = struct.Struct(">II")
_PRELUDE_BYTES = 12
#: A message's fixed overhead: prelude, prelude CRC, message CRC.
_OVERHEAD = 16
#: The largest message a decoder accepts (the AWS SDKs' limit is 16 MB; a larger length is a corrupt stream).
MAX_MESSAGE_BYTES = 16 * 1024 * 1024

HeaderValue = bool | int | bytes | str | uuid.UUID


@dataclass(frozen=True)
class EventMessage:
    """One decoded message: its headers (in order) and its payload bytes."""

    headers: dict[str, HeaderValue]
    payload: bytes

    @property
    def message_type(self) -> str:
        """``event``, ``exception`` or ``error`` (``event`` when the header is missing)."""
        value = self.headers.get(":message-type", "event")
        return value if isinstance(value, str) else "event"

    @property
    def event_type(self) -> str | None:
        """The ``:event-type`` (an event) or ``:exception-type`` (an exception) header."""
        name = ":exception-type" if self.message_type == "exception" else ":event-type"
        value = self.headers.get(name) or self.headers.get(":error-code")
        return value if isinstance(value, str) else None


def _crc(data: bytes, start: int = 0) -> int:
    return zlib.crc32(data, start) & 0xFFFFFFFF


def _encode_header(name: str, value: HeaderValue) -> bytes:
    raw_name = name.encode("utf-8")
    head = bytes([len(raw_name)]) + raw_name
    if value is True:
        return head + b"\x00"
    if value is False:
        return head + b"\x01"
    if isinstance(value, str):
        data = value.encode("utf-8")
        return head + b"\x07" + struct.pack(">H", len(data)) + data
    if isinstance(value, bytes):
        return head + b"\x06" + struct.pack(">H", len(value)) + value
    if isinstance(value, uuid.UUID):
        return head + b"\x09" + value.bytes
    return head + b"\x04" + struct.pack(">i", value)


def encode_message(headers: dict[str, HeaderValue], payload: bytes) -> bytes:
    """One message with ``headers`` (strings, bytes, booleans, 32-bit integers, UUIDs) and ``payload``."""
    raw_headers = b"".join(_encode_header(name, value) for name, value in headers.items())
    total = _OVERHEAD + len(raw_headers) + len(payload)
    prelude = _PRELUDE.pack(total, len(raw_headers))
    body = prelude + struct.pack(">I", _crc(prelude)) + raw_headers + payload
    return body + struct.pack(">I", _crc(body))


def event_frame(event_type: str, payload: bytes) -> bytes:
    """An ``event`` message as AWS sends them: ``:event-type``, ``:content-type: application/json``,
    ``:message-type: event``."""
    headers: dict[str, HeaderValue] = {":event-type": event_type, ":content-type": "application/json",
                                       ":message-type": "event"}  # fmt: skip
    return encode_message(headers, payload)


def exception_frame(exception_type: str, payload: bytes) -> bytes:
    """An ``exception`` message (a stream that fails mid-way: ``internalServerException``, ...)."""
    headers: dict[str, HeaderValue] = {":exception-type": exception_type, ":content-type": "application/json",
                                       ":message-type": "exception"}  # fmt: skip
    return encode_message(headers, payload)


def _decode_headers(data: bytes) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    at = 0
    try:
        while at < len(data):
            size = data[at]
            name = data[at + 1 : at + 1 + size].decode("utf-8")
            at += 1 + size
            kind = data[at]
            at += 1
            value: Any
            if kind in (0, 1):
                value = kind == 0
            elif kind in (2, 3, 4, 5, 8):
                width, code = {2: (1, ">b"), 3: (2, ">h"), 4: (4, ">i"), 5: (8, ">q"), 8: (8, ">q")}[kind]
                (value,) = struct.unpack(code, data[at : at + width])
                at += width
            elif kind in (6, 7):
                (length,) = struct.unpack(">H", data[at : at + 2])
                raw = data[at + 2 : at + 2 + length]
                if len(raw) != length:
                    raise EventStreamError("a header value runs past the headers")
                value = raw.decode("utf-8") if kind == 7 else raw
                at += 2 + length
            elif kind == 9:
                value = uuid.UUID(bytes=data[at : at + 16])
                at += 16
            else:
                raise EventStreamError(f"header {name!r} has an unknown value type {kind}")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as exc:
        raise EventStreamError(f"the message headers cannot be read: {exc}") from exc
    return headers


def decode_message(frame: bytes) -> EventMessage:
    """One whole message (``EventStreamError`` when a length or a CRC is wrong)."""
    if len(frame) < _OVERHEAD:
        raise EventStreamError(f"a message is at least {_OVERHEAD} bytes, not {len(frame)}")
    total, headers_length = _PRELUDE.unpack_from(frame)
    (prelude_crc,) = struct.unpack_from(">I", frame, 8)
    if prelude_crc != _crc(frame[:8]):
        raise EventStreamError("the prelude CRC does not match")
    if total != len(frame) or headers_length > total - _OVERHEAD:
        raise EventStreamError(f"the prelude says {total} bytes with {headers_length} of headers; "
                               f"the message has {len(frame)}")  # fmt: skip
    (message_crc,) = struct.unpack_from(">I", frame, total - 4)
    if message_crc != _crc(frame[: total - 4]):
        raise EventStreamError("the message CRC does not match")
    headers = _decode_headers(frame[_PRELUDE_BYTES : _PRELUDE_BYTES + headers_length])
    return EventMessage(headers, bytes(frame[_PRELUDE_BYTES + headers_length : total - 4]))


class FrameSplitter:
    """Byte chunks in, whole messages' bytes out (each frame as it came), keeping a partial tail; the framing
    is checked only as far as the lengths go (``decode_message`` checks the CRCs)."""

    __slots__ = ("_buffer", "broken")

    def __init__(self) -> None:
        self._buffer = bytearray()  # (appended to: a large frame in many chunks costs linear time)
        self.broken: str | None = None
        """Why the stream cannot be split further (a length no message has): the rest is one tail."""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The frames completed by ``chunk``."""
        data = self._buffer
        data += chunk
        frames = []
        at = 0
        while self.broken is None and len(data) - at >= _PRELUDE_BYTES:
            total, headers_length = _PRELUDE.unpack_from(data, at)
            if total < _OVERHEAD or total > MAX_MESSAGE_BYTES or headers_length > total - _OVERHEAD:
                self.broken = f"a message prelude says {total} bytes with {headers_length} of headers"
                break
            if len(data) - at < total:
                break
            frames.append(bytes(data[at : at + total]))
            at += total
        del data[:at]
        return frames

    def rest(self) -> bytes:
        """Bytes after the last whole frame."""
        return bytes(self._buffer)


def split_frames(data: bytes) -> list[bytes]:
    """A whole stream as its frames (a trailing incomplete frame is kept as the last item)."""
    return split_stream(FrameSplitter(), data)
