"""Following exchanges: which session each belongs to, what the intercepts change, and what to record.

``begin`` runs when a request has been read, before it is answered: it stitches the request to a
session, applies the tool-result intercepts, chooses the faults and computes the replay key, and returns
the ``Turn`` (immutable). ``complete`` runs once per exchange, from the one ``finally`` of the proxy's
handler, as soon as the whole answer is known and before its last bytes reach the client, so the agent's
next request always finds the session advanced. It settles the outcome once and hands the recording work
(after the observer's look at the answer, if any) to the event loop as a callback that runs after the bytes
went out, in completion order: each session's
records are appended in the order things happened, and no lock is needed because nothing in it awaits.
"""

from __future__ import annotations

import asyncio
import logging
import time

import orjson

from tracekit.intercepts import NO_FAULTS, InterceptConfig, active_faults, rewrite_request
from tracekit.providers.openai_responses import NAME as RESPONSES_NAME
from tracekit.proxy.exchange import Exchange, Outcome, SentRequest, Turn, settle
from tracekit.proxy.item_references import OutputItems
from tracekit.proxy.keys import request_key
from tracekit.proxy.memory_release import release_memory
from tracekit.proxy.observers import ExchangeObserver, watch_answer
from tracekit.proxy.recorder import Recorder
from tracekit.proxy.request import SEEN_MESSAGES, ParsedRequest, derive_conversation
from tracekit.proxy.sessions import PendingTurn, Session, SessionRegistry
from tracekit.redact import Redactor

log = logging.getLogger(__name__)


class ExchangeTracker:
    """Stitches exchanges into sessions and records them (see the module docstring)."""

    def __init__(
        self,
        recorder: Recorder | None,
        config: InterceptConfig | None = None,
        redactor: Redactor | None = None,
        observer: ExchangeObserver | None = None,
    ) -> None:
        self.registry = SessionRegistry()
        self.output_items = OutputItems()
        """Responses API output items by id, for requests that name them by ``item_reference``."""
        self.recorder = recorder
        self.observer = observer
        """Shown each answer (``observers.watch_answer``) just before the exchange is recorded."""
        self.config = config or InterceptConfig()
        self.redactor = redactor or (recorder.redactor if recorder is not None else Redactor())
        self.recording_errors: list[BaseException] = []
        self._scheduled = 0

    def begin(self, request: ParsedRequest) -> Turn:
        """Stitch, rewrite, pick faults and key a request that has just been read."""
        provider = request.provider
        client = None if request.session else request.client_session
        resolution = self.registry.resolve(
            provider.NAME,
            request.key,
            request.conversation.messages,
            named=request.session,
            label=self._label(request.session or (client.id if client is not None else None)),
            previous_id=request.continuation.previous_id,
            retry_count=request.retry_count,
            conversation=request.continuation.conversation,
            fingerprints=request.conversation.fingerprints,
            client=client,
            no_tools=request.side_shape,
            structured=request.structured,
        )
        session = resolution.session
        session.in_flight += 1
        session.last_active = time.monotonic()
        if session.pending is not None:
            # The session moved on from a failed turn without retrying it again.
            if self.recorder is not None:
                self.recorder.abandon_attempts(session)
            self.registry.set_pending(session, None)
        session.requests += 1
        session.last_key = request.key
        sent = SentRequest(request.body, request.raw, request.key, request.conversation)
        if self.config.intercepts and isinstance(request.body, dict):
            rewrite = rewrite_request(provider, request.body, self.config.intercepts, prior=resolution.prior)
            if rewrite.changed:
                conversation = derive_conversation(provider, self.output_items.resolve(rewrite.body), request.raw)
                sent = SentRequest(rewrite.body, orjson.dumps(rewrite.body), request_key(request.route, rewrite.body),
                                   conversation, tuple(rewrite.injections))  # fmt: skip
        faults = active_faults(self.config.faults, session.requests) if self.config.faults else NO_FAULTS
        return Turn(session, resolution.how, resolution.attempt, session.requests, resolution.agent_chain,
                    resolution.prior, resolution.history, sent, faults, side_call=resolution.side_call)  # fmt: skip

    def _label(self, named: str | None) -> str | None:
        """The name a new named session is recorded under: secrets replaced (None when it exists already)."""
        if not named or self.registry.knows(named):
            return None
        return self.redactor.redact_text(named)

    def complete(self, exchange: Exchange) -> Outcome:
        """The answer is known: settle the outcome, advance the session and schedule the recording."""
        turn = exchange.turn
        session = turn.session
        session.in_flight = max(0, session.in_flight - 1)
        session.last_active = time.monotonic()
        outcome = settle(exchange)
        if outcome.response is not None and exchange.provider.NAME == RESPONSES_NAME:
            self.output_items.learn(outcome.response)
        # A side call is beside the conversation: the session's conversation stays as it was.
        if not turn.side_call and outcome.reply is not None and outcome.response is not None:
            # Only a continuation needs the history it does not send (and the reply id it names).
            reply_id = None
            wire: list[object] = []
            history: list[dict[str, object]] = []
            if exchange.request.continuation.kept:
                provider = exchange.provider
                sent_body = turn.sent.body if isinstance(turn.sent.body, dict) else {}
                reply_id = provider.response_id(outcome.response)
                wire = [*turn.prior_items, *(provider.request_items(sent_body) or []),
                        *provider.reply_items(outcome.response)]  # fmt: skip
                history = [*turn.messages, outcome.reply]
            self.registry.advance(
                session, turn.agent_chain, outcome.reply, wire, history, reply_id, outcome.reply_fingerprint
            )
        else:
            self.registry.release(session)
        final = not (outcome.retryable and outcome.error is not None)
        if not final:
            self.registry.set_pending(session, PendingTurn(exchange.request.key, turn.attempt, exchange, outcome))
        loop = asyncio.get_running_loop()
        if self.observer is not None:
            # First in the queue: the records the observer adds at this stage are recorded with the exchange.
            loop.call_soon(watch_answer, self.observer, exchange, outcome)
        if self.recorder is not None:
            self._scheduled += 1
            loop.call_soon(self._record, session, exchange, outcome, final)
        return outcome

    def _record(self, session: Session, exchange: Exchange, outcome: Outcome, final: bool) -> None:
        self._scheduled -= 1
        assert self.recorder is not None
        try:
            self.recorder.record(session, exchange, outcome, final=final)
        except Exception as exc:  # a recording bug must not take the proxy down; it is reported at exit
            self.recording_errors.append(exc)
            log.exception("tracekit: could not record an exchange of session %s", session.id)

    async def recorded(self, exchange: Exchange) -> None:
        """Wait until ``exchange``, just completed, is in its session's file: awaited before the answer's last
        bytes go to the client, so that what the client saw survives ``kill -9``. The recording ``complete``
        queued runs first (``asyncio.sleep(0)`` lets the callbacks already queued run, in order), then any
        wait for the file: its creation in the helper thread, or a scrub that holds it."""
        if self.recorder is None:
            return
        await asyncio.sleep(0)
        trace = exchange.turn.session.trace
        if trace is not None and trace.builder.records:
            await self.recorder.settled(trace)

    async def drain(self) -> None:
        """Wait until every scheduled recording ran."""
        for _ in range(1000):
            if self._scheduled <= 0:
                return
            await asyncio.sleep(0)

    def expire(self, idle: float, now: float | None = None) -> int:
        """Close the sessions idle for ``idle`` seconds (none mid-exchange): a failed turn's model call is
        written, the trace finished and closed, the observer told (``close``), every index forgets them.
        Returns how many expired. A named session that comes back continues in a new file (``sessions``)."""
        count = self._close_idle((time.monotonic() if now is None else now) - idle)
        if count:
            # Only now: the expired sessions were still referenced inside ``_close_idle``, and what is freed
            # after the collection and the trim would stay (freelists, heap holes) until the next expiry.
            release_memory()
        return count

    def _close_idle(self, cutoff: float) -> int:
        """Close and forget the sessions idle since ``cutoff``; how many."""
        expired = [session for session in self.registry.sessions
                   if session.last_active <= cutoff and session.in_flight == 0]  # fmt: skip
        if not expired:
            return 0
        close = getattr(self.observer, "close", None)
        for session in expired:
            try:
                if session.pending is not None and self.recorder is not None:
                    self.recorder.abandon_attempts(session)
                if self.recorder is not None:
                    self.recorder.close_session(session)
                if callable(close):
                    close(session.id)
            except Exception as exc:  # one session's failure must not keep the others open
                self.recording_errors.append(exc)
                log.exception("tracekit: could not close idle session %s", session.id)
        if self.recorder is not None:
            self.recorder.drop_closed()
        self.registry.forget(expired)
        if not self.registry.sessions:
            SEEN_MESSAGES.clear()  # (a cache of what the sessions sent: nothing in it can hit any more)
        return len(expired)

    def close(self) -> None:
        """Write the model calls of turns left failed, and close every trace file."""
        if self.recorder is None:
            return
        for session in self.registry.sessions:
            if session.pending is not None:
                try:
                    self.recorder.abandon_attempts(session)
                except Exception as exc:  # one session's bug must not keep the others from closing
                    self.recording_errors.append(exc)
                    log.exception("tracekit: could not finish session %s", session.id)
                self.registry.set_pending(session, None)
        self.recorder.close()

    @property
    def sessions(self) -> list[Session]:
        """Every session seen, in order of their first request."""
        return self.registry.sessions
