"""One request/response through the proxy, in four parts:

- ``ParsedRequest`` (``tracekit.proxy.request``): what the agent sent, parsed once, immutable;
- ``Turn``: what the proxy decided before answering (session, attempt, what is sent upstream after the
  intercepts, faults), immutable;
- ``Reception``: the answer as it arrives, the one mutable part (the hot path only appends bytes and
  perf-counter times to it);
- ``Outcome``: what the exchange amounted to, computed once by ``settle`` when the answer is complete.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from tracekit.intercepts import NO_FAULTS, ActiveFaults, Injection
from tracekit.providers.base import Provider
from tracekit.proxy import limits
from tracekit.proxy.raw_text import text_of
from tracekit.proxy.request import Conversation, ParsedRequest, parse_body
from tracekit.proxy.sessions import Session
from tracekit.trace.builder import message_fingerprint

#: Statuses the official SDKs retry (besides connection errors), unless ``x-should-retry`` says otherwise.
RETRIED_STATUSES = frozenset({408, 409, 429})

AnswerSource = Literal["upstream", "recording", "fault", "miss", "guard"]
"""Who made the answer: the upstream API, a recording (replay), an ``http_error`` fault, the proxy's
replay-miss error, or an observer's refusal (the live guard stopping a session)."""

#: Transport failures that happen before any response arrived (the proxy answers with an error of its own).
NO_RESPONSE_FAILURES = frozenset({"connect", "connect_timeout", "reset"})
#: Bodies the proxy refused to pass on (``decoding``): the client got a 502 saying why, not to be retried.
REFUSED_FAILURES = frozenset({"too_large", "undecodable"})


@dataclass(frozen=True, slots=True)
class SentRequest:
    """The request as it goes upstream (or is looked up in the recordings): after the intercepts."""

    body: Any
    raw: bytes
    key: str
    """Replay key of the request as sent."""
    conversation: Conversation
    injections: tuple[Injection, ...] = ()


@dataclass(frozen=True, slots=True)
class Turn:
    """Where a request belongs and what the proxy does with it, decided before it is answered."""

    session: Session
    how: str
    """'header', 'client', 'thread', 'retry', 'continuity' or 'new'."""
    attempt: int
    number: int
    """1-based number of the request in its session (attempts included): what faults select."""
    agent_chain: list[int]
    prior_items: list[Any]
    """Wire items the server keeps before this request (a continuation sends only what is new)."""
    history: list[dict[str, Any]]
    """The same, as canonical messages."""
    sent: SentRequest
    faults: ActiveFaults = NO_FAULTS
    refusal: str | None = None
    """An observer refused the request (``observers``): answered with this message, never forwarded."""
    extra_records: tuple[Any, ...] = ()
    """Records an observer adds to the trace with this exchange (guard events)."""
    side_call: bool = False
    """A side call of its session (``sessions.is_side_call``): recorded as one, no turn of the conversation."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The whole canonical conversation the model is asked: what the server keeps, then what is sent."""
        return [*self.history, *self.sent.conversation.messages] if self.history else self.sent.conversation.messages

    @property
    def fingerprints(self) -> list[str]:
        """``message_fingerprint`` of each of ``messages``: the sent conversation's are computed once per
        request and shared (the recording and the live guard compare the conversation through them)."""
        sent = self.sent.conversation.fingerprints
        return [*map(message_fingerprint, self.history), *sent] if self.history else sent


class StreamTee:
    """Keeps the stream chunks an exchange passed on (the exact bytes), and parses them into events with the
    provider's ``stream_parser`` (SSE, or its own framing): the first
    ``max_kept`` bytes only. Past them the stream is still passed on to the client, but nothing more is kept
    or parsed, and the model call is marked ``truncated`` (an endless stream costs bounded memory)."""

    __slots__ = ("_parser", "_t0", "assembler", "chunks", "kept", "max_kept", "offsets_ms", "passed", "truncated")

    def __init__(self, provider: Provider, t0: float, max_kept: int = limits.MAX_KEPT_STREAM_BYTES) -> None:
        self.assembler = provider.stream_assembler()
        self.chunks: list[bytes] = []
        self.offsets_ms: list[float] = []
        self.kept = 0
        self.passed = 0
        """Bytes of the stream seen, kept or not."""
        self.max_kept = max_kept
        self.truncated = False
        self._parser = provider.stream_parser()
        self._t0 = t0

    def feed(self, chunk: bytes, arrived: float) -> None:
        """Record one chunk that arrived at ``arrived`` (perf counter)."""
        self.passed += len(chunk)
        if self.truncated or self.kept + len(chunk) > self.max_kept:
            self.truncated = True
            return
        self.kept += len(chunk)
        self.chunks.append(chunk)
        events = self._parser.feed(chunk)
        if events:
            offset = round((arrived - self._t0) * 1000, 3)
            for event in events:
                self.assembler.feed(event)
                self.offsets_ms.append(offset)

    def close(self, ended: float) -> None:
        """End of stream: a last event without its blank line still counts (as the SDKs do)."""
        if self.truncated:
            return
        for event in self._parser.close():
            self.assembler.feed(event)
            self.offsets_ms.append(round((ended - self._t0) * 1000, 3))

    def text(self) -> tuple[str, bool]:
        """The SSE bytes as text, and whether they had to be escaped (``tracekit.proxy.raw_text``)."""
        return text_of(b"".join(self.chunks))


class Reception:
    """The answer as it arrives (see the module docstring)."""

    __slots__ = ("answered", "body", "client_gone", "failure", "failure_detail", "headers", "source", "status",
                 "t_end", "t_first", "tee")  # fmt: skip

    def __init__(self) -> None:
        self.source: AnswerSource = "upstream"
        self.status: int | None = None
        self.answered = False
        """Whether a response (status and headers) arrived; False for a transport failure before it."""
        self.headers: dict[str, str] = {}
        self.tee: StreamTee | None = None
        self.body: bytes | None = None
        self.t_first: float | None = None
        self.t_end: float | None = None
        self.failure: str | None = None
        """Transport failure: 'connect', 'connect_timeout', 'read_timeout', 'reset' (closed before a response),
        'cut' (closed mid-body), 'fault_cut' (a stream_cut fault), 'cancelled' (the proxy stopped first)."""
        self.failure_detail: str | None = None
        self.client_gone = False

    def fail(self, failure: str, detail: str) -> None:
        """Note the first transport failure (a later one is its consequence)."""
        if self.failure is None:
            self.failure, self.failure_detail = failure, detail


@dataclass(eq=False, slots=True)
class Exchange:
    """One HTTP exchange with the model API as the proxy handled it."""

    request: ParsedRequest
    turn: Turn
    received: Reception = field(default_factory=Reception)
    websocket: bool = False
    """The request came as a ``response.create`` event on a Responses API WebSocket (``websocket``)."""
    t_wall: float = field(default_factory=time.time)
    t0: float = field(default_factory=time.perf_counter)

    @property
    def provider(self) -> Provider:
        """The wire format of the exchange."""
        return self.request.provider


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an exchange amounted to (computed once, by ``settle``)."""

    response: dict[str, Any] | None
    """The JSON response body (assembled from the events for a stream); None when nothing usable came."""
    reply: dict[str, Any] | None
    """The canonical assistant message, when the exchange produced a whole one."""
    error: dict[str, Any] | None
    partial: bool
    retryable: bool
    """Whether the SDKs retry this failure (status 408/409/429/5xx or a connection error)."""
    response_raw: str | None = None
    """The body as it came when it is not a JSON object (escaped when not UTF-8)."""
    response_parse_error: str | None = None
    escaped: tuple[str, ...] = ()
    """Fields whose text holds escaped bytes."""
    _reply_fingerprint: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def reply_fingerprint(self) -> str | None:
        """``message_fingerprint`` of ``reply``, computed once and shared by the session registry, the
        recording and the live guard (None without a reply)."""
        if self._reply_fingerprint is None and self.reply is not None:
            object.__setattr__(self, "_reply_fingerprint", message_fingerprint(self.reply))  # a cache
        return self._reply_fingerprint


def settle(exchange: Exchange) -> Outcome:
    """Derive the response, reply and error of the finished exchange."""
    provider = exchange.provider
    received = exchange.received
    status = received.status or 0
    response: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    partial = False
    raw: str | None = None
    parse_error: str | None = None
    escaped: tuple[str, ...] = ()
    if received.tee is not None:
        assembler = received.tee.assembler
        response = assembler.body() or None
        error = provider.response_error(assembler.error) if assembler.error else None
        partial = not assembler.done and error is None
        if received.tee.truncated:
            tee = received.tee
            error = {"type": "stream_truncated", "message": f"the stream passed {tee.passed:,} bytes on; the trace "
                     f"keeps the first {tee.kept:,} (max_kept_stream_bytes is {tee.max_kept:,})"}  # fmt: skip
    elif received.body is not None:
        parsed, parse_error = parse_body(received.body)
        response = parsed if isinstance(parsed, dict) else None
        if response is not None:
            error = provider.response_error(response)
        else:
            raw, was_escaped = text_of(received.body)
            escaped = ("response_raw",) if was_escaped else ()
            if status >= 400:
                error = {"type": "http_error", "message": raw[:500]}
            elif received.failure is None:
                why = f"the response body is not a JSON object ({parse_error})"
                error = {"type": "invalid_response", "message": why}
    failure = received.failure
    if failure is not None and not received.answered:
        error = {"type": "transport_error", "message": received.failure_detail or failure}
    elif failure in REFUSED_FAILURES:
        partial = True
        error = {"type": f"response_{failure}", "message": received.failure_detail or failure}
    elif failure == "cancelled":
        partial = True
        error = {"type": "proxy_stopped", "message": "the proxy stopped before the exchange ended"}
    elif failure is not None:
        partial = True
        error = error or {"type": "transport_error", "message": received.failure_detail or "stream cut"}
    elif received.client_gone:
        partial = True
        error = error or {"type": "client_disconnected", "message": "the client went away mid-response"}
    if status >= 400 and error is None:
        error = {"type": "http_error", "message": f"HTTP {status}"}
    reply = None
    if error is None and not partial and response is not None and status < 400:
        reply = provider.response_message(response)
    return Outcome(response, reply, error, partial, _retryable(received, status), raw, parse_error, escaped)


def _retryable(received: Reception, status: int) -> bool:
    should_retry = received.headers.get("x-should-retry")
    if should_retry == "true":
        return True
    if should_retry == "false":
        return False
    if received.failure in NO_RESPONSE_FAILURES:
        return True
    if received.failure in REFUSED_FAILURES:
        return False
    return status in RETRIED_STATUSES or status >= 500
