"""What replay keeps of one recorded exchange: ``RecordedAnswer`` (a model call or a failed attempt) and
``RecordedRoute`` (an exchange of another route), built from a record of either reader.

A record comes from the models' reader (``tracekit.trace``: bodies parsed) or from the replay reader
(``tracekit.proxy.replay_reader``: bodies as JSON bytes); both have the same field names, and the callers
give the bodies as bytes: ``json_bytes`` of a parsed body, ``normalized_json`` of a body's bytes. Either way
a body is kept as the bytes orjson writes for it (a hit sends a JSON response as those bytes), in a bytes
object of its own size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from tracekit.providers import PROVIDERS
from tracekit.providers.base import Provider
from tracekit.proxy.raw_text import bytes_of

_FIRST_PROVIDER = next(iter(PROVIDERS))


@dataclass(slots=True)
class RecordedAnswer:
    """One recorded answer to a request. Request and response are kept as their JSON bytes (a parsed body
    takes several times its size in memory); ``request`` and ``response`` parse them when asked."""

    where: str
    """``file.jsonl model_call 3`` (or ``... attempt 1 of model_call 3`` for a failed attempt)."""
    provider: Provider
    request_json: bytes | None
    """The request's JSON as recorded (any spacing: it is only parsed)."""
    status: int
    response_json: bytes | None
    """The response's JSON as orjson writes it (a hit answers with these bytes)."""
    sse: bytes | None
    """The SSE bytes exactly as received."""
    offsets_ms: list[float] | None
    latency_ms: float | None
    ttft_ms: float | None
    partial: bool
    transport: str | None
    headers: dict[str, str]
    raw: bytes | None = None
    """The body exactly as received when it was not a JSON object."""

    @property
    def request(self) -> Any:
        """The recorded request body (None for a failed attempt, which records none)."""
        return None if self.request_json is None else orjson.loads(self.request_json)

    @property
    def response(self) -> dict[str, Any] | None:
        """The recorded response body."""
        return None if self.response_json is None else orjson.loads(self.response_json)


@dataclass
class RecordedRoute:
    """One recorded answer of another route."""

    where: str
    method: str
    path: str
    status: int
    headers: dict[str, str]
    body: bytes
    latency_ms: float | None


def json_bytes(value: Any) -> bytes | None:
    """``value`` as JSON in a bytes object of its own size (orjson's own keeps a buffer of at least 4 kB)."""
    return None if value is None else bytes(memoryview(orjson.dumps(value)))


def normalized_json(data: bytes | None) -> bytes | None:
    """``json_bytes`` of the value the JSON ``data`` holds (None for None or ``null``)."""
    return None if data is None else json_bytes(orjson.loads(data))


def error_provider(record: Any) -> str:
    """An attempt's provider; attempts written before error records named it were Anthropic's (the first)."""
    return record.provider or _FIRST_PROVIDER


def call_answer(
    name: str, record: Any, request_json: bytes | None, response_json: bytes | None, headers: dict[str, str]
) -> RecordedAnswer:
    """The answer a ``model_call`` record of the file ``name`` gives (``headers``: its response headers,
    shared between the answers that have the same)."""
    escaped = record.escaped or ()
    return RecordedAnswer(
        where=f"{name} model_call {record.index}",
        provider=PROVIDERS[record.provider],
        request_json=request_json,
        status=record.status or 200,
        response_json=response_json,
        sse=bytes_of(record.sse, "sse" in escaped) if record.sse is not None else None,
        offsets_ms=record.event_offsets_ms,
        latency_ms=record.latency_ms,
        ttft_ms=record.ttft_ms,
        partial=record.partial,
        transport=record.transport,
        headers=headers,
        raw=bytes_of(record.response_raw, "response_raw" in escaped) if record.response_raw is not None else None,
    )


def attempt_answer(name: str, record: Any, body_json: bytes | None, headers: dict[str, str]) -> RecordedAnswer:
    """The answer an ``error`` record of a failed attempt gives (``body_json``: its body when an object)."""
    return RecordedAnswer(
        where=f"{name} attempt {record.attempt or '?'} of model_call {record.model_call}",
        provider=PROVIDERS[error_provider(record)],
        request_json=None,
        status=record.status or 502,
        response_json=body_json,
        sse=bytes_of(record.sse, "sse" in (record.escaped or ())) if record.sse is not None else None,
        offsets_ms=record.event_offsets_ms,
        latency_ms=record.latency_ms,
        ttft_ms=None,
        partial=bool(record.partial),
        transport=record.transport,
        headers=headers,
    )


def route_answer_of(name: str, record: Any, response_json: bytes | None) -> RecordedRoute:
    """The answer an ``http_exchange`` record gives (``response_json``: its JSON response, None when none)."""
    escaped = record.escaped or ()
    if record.response_raw is not None:
        body = bytes_of(record.response_raw, "response_raw" in escaped)
    else:
        body = response_json if response_json is not None else b""
    return RecordedRoute(
        where=f"{name} {record.method} {record.path}",
        method=record.method,
        path=record.path,
        status=record.status or 502,
        headers=dict(record.response_headers or {}),
        body=body,
        latency_ms=record.latency_ms,
    )


__all__ = [
    "RecordedAnswer",
    "RecordedRoute",
    "attempt_answer",
    "call_answer",
    "error_provider",
    "json_bytes",
    "normalized_json",
    "route_answer_of",
]
