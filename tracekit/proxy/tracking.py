"""Following exchanges: which session each belongs to, what the intercepts change, and what to record.

``begin`` runs when a request has been read, before it is answered: it stitches the request to a
session, applies the tool-result intercepts, chooses the faults and computes the replay key.
``complete`` runs as soon as the whole answer is known, before its last bytes reach the client, so the
agent's next request always finds the session advanced. It hands the recording work to the event loop
as a callback that runs after the bytes went out, in completion order: each session's records are
appended in the order things happened, and no lock is needed because nothing in it awaits.
"""

from __future__ import annotations

import asyncio
import logging

import orjson

from tracekit.intercepts import InterceptConfig, active_faults, rewrite_request
from tracekit.proxy.exchange import Exchange, Outcome
from tracekit.proxy.headers import SESSION_HEADER, retry_count
from tracekit.proxy.keys import request_key
from tracekit.proxy.recorder import Recorder
from tracekit.proxy.sessions import PendingTurn, Session, SessionRegistry

log = logging.getLogger(__name__)


class ExchangeTracker:
    """Stitches exchanges into sessions and records them (see the module docstring)."""

    def __init__(self, recorder: Recorder | None, config: InterceptConfig | None = None) -> None:
        self.registry = SessionRegistry()
        self.recorder = recorder
        self.config = config or InterceptConfig()
        self.recording_errors: list[BaseException] = []
        self._scheduled = 0

    def begin(self, exchange: Exchange) -> None:
        """Stitch, rewrite, pick faults and key a request that has just been read."""
        provider = exchange.provider
        body = exchange.body
        previous_id: str | None = None
        if isinstance(body, dict):
            exchange.stream = provider.request_stream(body)
            try:
                _, agent_messages = provider.request_conversation(body)
            except (TypeError, AttributeError):  # "messages": 3 -- no conversation; forwarded as it is
                agent_messages = []
            thread = body.get("thread")
            exchange.threaded = isinstance(thread, dict)
            if isinstance(thread, dict) and thread.get("type") == "continue":
                previous_id = str(thread.get("previous_message_id") or "") or None
        else:
            agent_messages = []
        exchange.agent_key = request_key(exchange.route, body, exchange.raw)
        resolution = self.registry.resolve(
            provider.NAME,
            exchange.agent_key,
            agent_messages,
            named=exchange.headers.get(SESSION_HEADER),
            previous_message_id=previous_id,
            retry_count=retry_count(exchange.headers),
        )
        session = resolution.session
        if session.pending is not None:
            # The session moved on from a failed turn without retrying it again.
            if self.recorder is not None:
                self.recorder.abandon_attempts(session)
            self.registry.set_pending(session, None)
        session.requests += 1
        session.last_key = exchange.agent_key
        exchange.session = session
        exchange.how = resolution.how
        exchange.attempt = resolution.attempt
        exchange.request_number = session.requests
        exchange.agent_chain = resolution.agent_chain
        exchange.sent_body, exchange.sent_raw, exchange.key = body, exchange.raw, exchange.agent_key
        if isinstance(body, dict):
            if self.config.intercepts:
                rewrite = rewrite_request(provider.NAME, body, self.config.intercepts, prior=resolution.prior)
                if rewrite.changed:
                    exchange.sent_body = rewrite.body
                    exchange.sent_raw = orjson.dumps(rewrite.body)
                    exchange.key = request_key(exchange.route, rewrite.body)
                    exchange.injections = rewrite.injections
            messages = exchange.sent_body.get("messages")
            exchange.full_messages = [*resolution.prior, *(messages if isinstance(messages, list) else [])]
        if self.config.faults:
            exchange.faults = active_faults(self.config.faults, exchange.request_number)

    def complete(self, exchange: Exchange) -> Outcome | None:
        """The answer is known: advance the session and schedule the recording (once per exchange)."""
        if exchange.completed:
            return None
        exchange.completed = True
        session: Session | None = exchange.session
        if session is None:
            return None
        outcome = exchange.outcome()
        if outcome.reply is not None:
            # Only a thread continuation needs the history it does not send (and the reply id it names).
            reply_id = wire = None
            if exchange.threaded:
                reply_id = (outcome.response or {}).get("id")
                wire = [*exchange.full_messages, outcome.reply_wire or outcome.reply]
            self.registry.advance(session, exchange.agent_chain, outcome.reply, wire or [], reply_id)
        else:
            self.registry.release(session)
        final = not (outcome.retryable and outcome.error is not None)
        if not final:
            self.registry.set_pending(session, PendingTurn(exchange.agent_key, exchange.attempt, exchange))
        if self.recorder is not None:
            self._scheduled += 1
            asyncio.get_running_loop().call_soon(self._record, session, exchange, outcome, final)
        return outcome

    def _record(self, session: Session, exchange: Exchange, outcome: Outcome, final: bool) -> None:
        self._scheduled -= 1
        assert self.recorder is not None
        try:
            self.recorder.record(session, exchange, outcome, final=final)
        except Exception as exc:  # a recording bug must not take the proxy down; it is reported at exit
            self.recording_errors.append(exc)
            log.exception("tracekit: could not record an exchange of session %s", session.id)

    async def drain(self) -> None:
        """Wait until every scheduled recording ran."""
        for _ in range(1000):
            if self._scheduled <= 0:
                return
            await asyncio.sleep(0)

    def close(self) -> None:
        """Write the model calls of turns left failed, and close every trace file."""
        if self.recorder is None:
            return
        for session in self.registry.sessions:
            if session.pending is not None:
                self.recorder.abandon_attempts(session)
                self.registry.set_pending(session, None)
        self.recorder.close()

    @property
    def sessions(self) -> list[Session]:
        """Every session seen, in order of their first request."""
        return self.registry.sessions

