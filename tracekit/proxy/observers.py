"""A hook for watching each session's exchanges as they happen: the live guard plugs in here.

The proxy knows nothing of what an observer checks (the guard lives in a layer above and runs the
detectors); it only calls ``ExchangeObserver.observe`` twice per exchange and applies what comes back:

- ``Seen(stage="request")``, once a request is stitched to its session and before it is answered: the
  observer may return a ``Decision`` that changes the body sent upstream (a note after the tool results),
  refuses the request (the proxy answers with a provider-shaped error the SDKs do not retry), and adds
  records (guard events, the note's injection) to the session's trace with this exchange;
- ``Seen(stage="answer")``, when the whole answer is known, in a callback that runs once its last bytes
  were handed on, just before the exchange is recorded: off the client's wait, and before the session's
  next request is read. The records of a ``Decision`` it returns are added to the trace with this exchange
  (the rest of the decision is ignored: the request was answered).

An observer must be quick (it runs on the event loop) and must not raise; an exception is logged and the
exchange goes on unobserved. Example (a limit of ten requests per session)::

    class TenRequests:
        def __init__(self) -> None:
            self.seen: dict[str, int] = {}

        def observe(self, seen: Seen) -> Decision | None:
            if seen.stage != "request":
                return None
            self.seen[seen.session] = self.seen.get(seen.session, 0) + 1
            if self.seen[seen.session] > 10:
                return Decision(refusal="more than 10 requests in this session")
            return None

    ProxyConfig(upstream=url, out_dir=out, observer=TenRequests())
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import orjson

from tracekit.providers.base import Provider
from tracekit.proxy.answers import Answer, json_answer
from tracekit.proxy.exchange import Exchange, Outcome, SentRequest
from tracekit.proxy.keys import request_key

log = logging.getLogger(__name__)

#: HTTP status of a refusal: 403 is not retried by the official SDKs (openai and anthropic
#: ``_base_client._should_retry`` retry 408, 409, 429 and 5xx only), and ``x-should-retry: false`` says so
#: explicitly, which both SDKs obey before looking at the status.
REFUSAL_STATUS = 403


@dataclass(frozen=True, slots=True)
class Seen:
    """One moment of an exchange, as an observer sees it."""

    stage: Literal["request", "answer"]
    session: str
    """The session's id (stable for the life of the proxy)."""
    provider: Provider
    messages: list[dict[str, Any]]
    """The whole canonical conversation the model is asked (history the server keeps included)."""
    system: Any
    body: Any
    """The request body as it goes upstream (after the intercepts); None when it is not a JSON object."""
    t: float
    """Wall-clock time (``time.time()``) the exchange started."""
    reply: dict[str, Any] | None = None
    """``answer`` stage: the canonical assistant message the model answered with (None on an error)."""
    response: dict[str, Any] | None = None
    """``answer`` stage: the response body (for usage)."""
    status: int | None = None
    fingerprints: list[str] | None = None
    """``message_fingerprint`` of each of ``messages``, derived once per request and shared with the session
    registry and the recording (an observer that compares conversations need not hash them again)."""
    reply_fingerprint: str | None = None
    """``answer`` stage: the same for ``reply``."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What an observer wants done with a request (``request`` stage)."""

    body: dict[str, Any] | None = None
    """The body to send upstream instead (the conversation is recorded as the agent sent it)."""
    refusal: str | None = None
    """Answer with this message in a provider-shaped error instead of forwarding the request."""
    records: tuple[Any, ...] = ()
    """Records to add to the session's trace with this exchange (their ``model_call`` is filled in)."""


class ExchangeObserver(Protocol):
    """Watches exchanges (see the module docstring). An observer may also have ``close(session_id)``, called
    when the proxy closes an idle session (``ProxyConfig.session_idle_timeout``): release what it holds."""

    def observe(self, seen: Seen) -> Decision | None:
        """Called before a request is answered and once its answer is known."""


def watch_request(observer: ExchangeObserver, exchange: Exchange) -> None:
    """Show the observer a request about to be answered and apply its decision to the exchange's turn. A side
    call (``Turn.side_call``) is no turn of the conversation the observer follows: it is not shown."""
    turn = exchange.turn
    if turn.side_call:
        return
    sent = turn.sent
    seen = Seen("request", turn.session.id, exchange.provider, turn.messages, sent.conversation.system,
                sent.body if isinstance(sent.body, dict) else None, exchange.t_wall,
                fingerprints=turn.fingerprints)  # fmt: skip
    decision = _observe(observer, seen)
    if decision is None:
        return
    if decision.body is not None:
        body = decision.body
        raw = orjson.dumps(body)
        # The conversation stays as the agent sent it: the agent's next request does not repeat the note.
        sent = SentRequest(body, raw, request_key(exchange.request.route, body), sent.conversation, sent.injections)
    exchange.turn = dataclasses.replace(turn, sent=sent, refusal=decision.refusal, extra_records=decision.records)


def watch_answer(observer: ExchangeObserver, exchange: Exchange, outcome: Outcome) -> None:
    """Show the observer the answer of an exchange; the records it returns join the exchange's (a side call's
    is not shown, as above)."""
    turn = exchange.turn
    if turn.side_call:
        return
    sent = turn.sent
    seen = Seen("answer", turn.session.id, exchange.provider, turn.messages, sent.conversation.system,
                sent.body if isinstance(sent.body, dict) else None, exchange.t_wall, outcome.reply,
                outcome.response, exchange.received.status, turn.fingerprints, outcome.reply_fingerprint)  # fmt: skip
    decision = _observe(observer, seen)
    if decision is not None and decision.records:
        exchange.turn = dataclasses.replace(turn, extra_records=(*turn.extra_records, *decision.records))


def refusal_answer(provider: Provider, message: str) -> Answer:
    """The provider-shaped error a refused request gets (not retried by the SDKs)."""
    body = provider.error_body(REFUSAL_STATUS, message, code="tracekit_guard")
    return json_answer(REFUSAL_STATUS, body, {"x-should-retry": "false", "x-tracekit-guard": "stop"})


def is_loopback_peer(remote: str | None) -> bool:
    """Whether a client address (``request.remote``) is a loopback address (an IPv4 one seen through a
    dual-stack socket, ``::ffff:127.0.0.1``, included)."""
    if not remote:
        return False
    try:
        address = ipaddress.ip_address(remote.split("%")[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def _observe(observer: ExchangeObserver, seen: Seen) -> Decision | None:
    try:
        return observer.observe(seen)
    except Exception:  # an observer's bug must not take the exchange down
        log.exception("tracekit: the exchange observer failed on session %s", seen.session)
        return None
