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

import copy
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
            body = with_note(seen.provider.NAME, seen.body, verdict.note)
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


def with_note(provider: str, body: dict[str, Any], note: str) -> dict[str, Any] | None:
    """A copy of ``body`` with ``note`` added; None when the body has no conversation to add it to.

    The note goes after the tool results, where the model reads it before it answers:

    - Anthropic Messages: a text block at the end of the last user message (the one holding the results);
    - OpenAI Chat Completions: a user message after the ``tool`` messages;
    - OpenAI Responses: a user message item after the ``function_call_output`` items (a string ``input``
      becomes a list of the two messages).

    Example::

        body = with_note("anthropic", request_body, "tracekit guard: this call was made 3 times ...")
    """
    if provider == "openai_responses":
        given = body.get("input")
        if isinstance(given, str):
            items: list[Any] = [{"role": "user", "content": given}]
        elif isinstance(given, list):
            items = list(given)
        else:
            return None
        items.append({"role": "user", "content": [{"type": "input_text", "text": note}]})
        return {**body, "input": items}
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    messages = list(messages)
    last = messages[-1] if messages else None
    if provider == "anthropic" and isinstance(last, dict) and last.get("role") == "user":
        last = copy.copy(last)
        content = last.get("content")
        blocks = list(content) if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
        blocks.append({"type": "text", "text": note})
        last["content"] = blocks
        messages[-1] = last
    else:
        messages.append({"role": "user", "content": note})
    return {**body, "messages": messages}
