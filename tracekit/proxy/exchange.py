"""One request/response through the proxy: what was asked, what came back, and when.

The hot path only appends to an ``Exchange`` (bytes and perf-counter times); everything derived from
it (the assembled response, the reply, usage, offsets) is computed once it is over, in ``outcome()``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracekit.intercepts import NO_FAULTS, ActiveFaults, Injection
from tracekit.providers.base import Provider
from tracekit.providers.sse import SSEParser

#: Statuses the official SDKs retry (besides connection errors), unless ``x-should-retry`` says otherwise.
RETRIED_STATUSES = frozenset({408, 409, 429})


@dataclass
class Outcome:
    """What an exchange amounted to."""

    response: dict[str, Any] | None
    """The JSON response body (assembled from the events for a stream); None when nothing usable came."""
    reply: dict[str, Any] | None
    """The canonical assistant message, when the exchange produced a whole one."""
    reply_wire: dict[str, Any] | None
    """The reply as the agent will send it back (Anthropic wire shape), for thread continuations."""
    error: dict[str, Any] | None
    partial: bool
    retryable: bool
    """Whether the SDKs retry this failure (status 408/409/429/5xx or a connection error)."""


class StreamTee:
    """Keeps the SSE chunks an exchange passed on, and parses them into events after each is sent."""

    __slots__ = ("_parser", "_t0", "assembler", "chunks", "offsets_ms")

    def __init__(self, provider: Provider, t0: float) -> None:
        self.assembler = provider.stream_assembler()
        self.chunks: list[bytes] = []
        self.offsets_ms: list[float] = []
        self._parser = SSEParser()
        self._t0 = t0

    def feed(self, chunk: bytes, arrived: float) -> None:
        """Record one chunk that arrived at ``arrived`` (perf counter)."""
        self.chunks.append(chunk)
        events = self._parser.feed(chunk)
        if events:
            offset = round((arrived - self._t0) * 1000, 3)
            for event in events:
                self.assembler.feed(event)
                self.offsets_ms.append(offset)

    def close(self, ended: float) -> None:
        """End of stream: a last event without its blank line still counts (as the SDKs do)."""
        for event in self._parser.close():
            self.assembler.feed(event)
            self.offsets_ms.append(round((ended - self._t0) * 1000, 3))

    @property
    def text(self) -> str:
        """The SSE bytes as text."""
        return b"".join(self.chunks).decode("utf-8", errors="replace")


@dataclass(eq=False)
class Exchange:
    """One HTTP exchange with the model API as the proxy handled it."""

    provider: Provider
    route: str
    query: str
    raw: bytes
    body: Any
    headers: dict[str, str]
    t_wall: float = field(default_factory=time.time)
    t0: float = field(default_factory=time.perf_counter)
    parse_error: str | None = None
    """Why the body is not a JSON object ('empty body', orjson's message, 'not a JSON object: list')."""
    # decided before the answer
    sent_body: Any = None
    sent_raw: bytes = b""
    key: str = ""
    """Replay key of the request as sent (after intercepts)."""
    agent_key: str = ""
    """Key of the request as the agent sent it (retry detection)."""
    stream: bool = False
    threaded: bool = False
    """The request has an Anthropic ``thread`` field (create or continue)."""
    session: Any = None
    how: str = "new"
    attempt: int = 1
    request_number: int = 0
    full_messages: list[dict[str, Any]] = field(default_factory=list)
    agent_chain: list[str] = field(default_factory=list)
    injections: list[Injection] = field(default_factory=list)
    faults: ActiveFaults = NO_FAULTS
    # the answer
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    tee: StreamTee | None = None
    body_bytes: bytes | None = None
    t_first: float | None = None
    t_end: float | None = None
    failure: str | None = None
    """Transport failure: 'connect' (upstream unreachable), 'reset' (closed before a response),
    'cut' (closed mid-body), 'fault_cut' (a stream_cut fault), 'cancelled' (the proxy stopped first)."""
    failure_detail: str | None = None
    client_gone: bool = False
    fault_answer: bool = False
    """The answer was made by an http_error fault, not by upstream or a recording."""
    miss_answer: bool = False
    """The answer is the replay-miss error the proxy made."""
    replayed: bool = False
    miss: bool = False
    """No recording matched (replay)."""
    completed: bool = False

    @property
    def streamed(self) -> bool:
        """Whether the answer was an SSE stream."""
        return self.tee is not None

    def outcome(self) -> Outcome:
        """Derive the response, reply and error of the finished exchange."""
        provider = self.provider
        response: dict[str, Any] | None = None
        error: dict[str, Any] | None = None
        partial = False
        if self.tee is not None:
            assembler = self.tee.assembler
            response = assembler.body() or None
            error = provider.response_error(assembler.error) if assembler.error else None
            partial = not assembler.done and error is None
        elif self.body_bytes is not None:
            try:
                parsed = orjson.loads(self.body_bytes) if self.body_bytes else None
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict):
                response = parsed
                error = provider.response_error(parsed)
            elif (self.status or 0) >= 400:
                error = {"type": "http_error", "message": self.body_bytes[:500].decode("utf-8", "replace")}
        if self.failure in ("connect", "reset"):
            error = {"type": "transport_error", "message": self.failure_detail or self.failure}
        elif self.failure == "cancelled":
            partial = True
            error = {"type": "proxy_stopped", "message": "the proxy stopped before the exchange ended"}
        elif self.failure in ("cut", "fault_cut"):
            partial = True
            error = error or {"type": "transport_error", "message": self.failure_detail or "stream cut"}
        elif self.client_gone:
            partial = True
            error = error or {"type": "client_disconnected", "message": "the client went away mid-response"}
        status = self.status or 0
        if status >= 400 and error is None:
            error = {"type": "http_error", "message": f"HTTP {status}"}
        reply = reply_wire = None
        if error is None and not partial and response is not None and status < 400:
            reply = provider.response_message(response)
            if reply is not None and provider.NAME == "anthropic":
                reply_wire = {"role": "assistant", "content": response.get("content") or []}
        return Outcome(response, reply, reply_wire, error, partial, self._retryable(status))

    def _retryable(self, status: int) -> bool:
        should_retry = self.response_headers.get("x-should-retry")
        if should_retry == "true":
            return True
        if should_retry == "false":
            return False
        if self.failure in ("connect", "reset"):
            return True
        return status in RETRIED_STATUSES or status >= 500
