"""The live guard as the proxy's exchange observer: one ``GuardSession`` per proxy session.

``tracekit record --guard [FILE]`` and ``tracekit replay --guard [FILE]`` build one and hand it to the proxy
(``ProxyConfig.observer``)::

    guard = LiveGuard(load_guard_config("guard.yaml"))
    with RunningProxy(ProxyConfig(upstream=url, out_dir=out, observer=guard)) as proxy:
        ...
    guard.findings()  # every session's findings, as offline analysis reports them

Each event is a ``guard`` record in the session's trace, written with the exchange it was raised on (a
finding only recorded is raised once that exchange's answer went out, ``GuardSession``), and one log line;
a ``warn`` note is added to the request (and recorded as an ``intercept`` record of mode ``guard_note``), a
``stop`` answers it with a provider-shaped error the SDKs do not retry.
"""

from __future__ import annotations

import time
from typing import Any

from tracekit.analyze.detectors import Finding
from tracekit.guard.config import GuardConfig
from tracekit.guard.session import GuardSession, SessionPlan
from tracekit.proxy.observers import Decision, Seen
from tracekit.trace.models import Intercept


class LiveGuard:
    """Runs the detectors and budgets of a guard file on every session the proxy sees."""

    def __init__(self, config: GuardConfig | None = None) -> None:
        self.config = config or GuardConfig()
        self.options = self.config.detector_options()
        self.plan = SessionPlan(self.config, self.options)
        self.sessions: dict[str, GuardSession] = {}
        self._refused: set[str] = set()
        self._finished: dict[str, list[Finding]] = {}
        """Findings of sessions closed while the proxy runs (only those that found something)."""

    def observe(self, seen: Seen) -> Decision | None:
        """The proxy's hook (``ExchangeObserver``)."""
        session = self.sessions.get(seen.session)
        if session is None:
            session = self.sessions[seen.session] = GuardSession(
                seen.session, self.config, self.options, seen.t, self.plan
            )
        if seen.stage == "answer":
            refused = seen.session in self._refused
            self._refused.discard(seen.session)
            usage = seen.provider.response_usage(seen.response) if seen.response else None
            events = session.on_answer(seen.reply, usage, time.time(), refused, seen.reply_fingerprint)
            return Decision(records=tuple(events)) if events else None
        verdict = session.on_request(seen.messages, seen.system, time.time(), seen.fingerprints)
        records: list[Any] = list(verdict.events)
        body = None
        if verdict.refusal is not None:
            self._refused.add(seen.session)
        elif verdict.note is not None and seen.body is not None:
            body = seen.provider.with_note(seen.body, verdict.note)
            if body is not None:
                records.append(Intercept(mode="guard_note", injected=verdict.note))
        if not records and verdict.refusal is None:
            return None
        return Decision(body=body, refusal=verdict.refusal, records=tuple(records))

    def status(self) -> dict[str, dict[str, Any]]:
        """Each session's counts and guard events, by session id (``GET /_tracekit/sessions``)."""
        now = time.time()
        return {name: session.status(now) for name, session in self.sessions.items()}

    def close(self, session_id: str) -> None:
        """The proxy closed an idle session: finish it now and release its state (its findings are kept)."""
        session = self.sessions.pop(session_id, None)
        self._refused.discard(session_id)
        if session is not None:
            found = session.finish()
            if found:
                self._finished[session_id] = found

    def findings(self) -> dict[str, list[Finding]]:
        """Every session's findings once it is over (the calls left are fed first); sessions closed while the
        proxy ran are included when they found something."""
        return {**self._finished, **{name: session.finish() for name, session in self.sessions.items()}}

