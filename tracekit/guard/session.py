"""One session under the guard: its records as they happen, the detectors fed call by call, its budgets.

The session derives its records with the same ``TraceBuilder`` the recorder uses: each request's new
messages (tool results, user turns), each answer's reply and usage. A tool call is fed to the detectors
once the request after it arrives (its result is in that request, or it never came), in call order; so
the detectors see the calls exactly as offline analysis of the finished trace does, and the findings they
report at the end are the same. What they report on the way (a loop as soon as it repeated often enough)
and the budgets decide what happens to the request at hand: nothing (``record``), a note added to it
(``warn``) or a refusal (``stop``; every later request of the session is refused too).

Only what can change the request runs before it is answered: the detectors whose findings the guard file
acts on (``warn`` or ``stop``) and the budgets. The other detectors, whose findings are only recorded, are
fed the same calls once the answer went out (``on_answer``), and their events are written with the same
exchange; so the default guard (record every finding, no budget) adds nothing to the client's wait.

Example::

    session = GuardSession("s1", GuardConfig(), GuardConfig().detector_options(), started=time.time())
    verdict = session.on_request(messages, system, now=time.time())
    ...
    events = session.on_answer(reply, usage, now=time.time(), refused=False)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from tracekit.analyze.detectors import REGISTRY, DetectorContext, DetectorRun, Finding
from tracekit.analyze.graph import CallGraph, CallNode, node_of
from tracekit.guard.config import BUDGETS, Action, GuardConfig
from tracekit.trace import Trace, content_text
from tracekit.trace.builder import READ_ONLY_RECORDS, TraceBuilder
from tracekit.trace.models import Guard, ModelCall, ToolCall, ToolResult, Usage

log = logging.getLogger("tracekit.guard")


@dataclass
class Verdict:
    """What the guard decided for one request: the events it raised, a note to add, or a refusal."""

    events: list[Guard] = field(default_factory=list)
    note: str | None = None
    refusal: str | None = None


class GuardSession:
    """The guard's view of one session (see the module docstring)."""

    def __init__(
        self,
        session: str,
        config: GuardConfig,
        options: dict[str, dict[str, Any]],
        started: float,
        plan: SessionPlan | None = None,
    ) -> None:
        self.session = session
        self.config = config
        self.started = started
        self.plan = plan = plan or SessionPlan(config, options)
        self._budgets = list(plan.budgets)
        """The budgets not yet gone over: (name, limit, action)."""
        # Read-only records (no validation, no copies): the guard reads them and writes none.
        self.builder = TraceBuilder(READ_ONLY_RECORDS.Header(trace_id=session, source="guard"), read_only=True)
        self.graph = CallGraph([])
        context = DetectorContext(self.graph, live=True)
        # What the detectors read of the trace, grown as the records come (in place of the finished trace's).
        context.user_turns = []
        context.agent_text_turns = []
        context.message_texts = []
        self.context = context
        self.acting = DetectorRun(context, plan.acting) if plan.acting is not None else None
        """The detectors whose findings are acted on: fed before the request is answered."""
        self.recording: DetectorRun | None = None
        """The others, fed once the answer went out (made with the session's first answer)."""
        self.model_calls = 0
        self.tool_calls = 0
        self.tokens = 0
        self.errors = 0
        self.events: list[Guard] = []
        self.stopped: str | None = None
        """The refusal message once a ``stop`` fired: every later request gets it."""
        self._calls: list[ToolCall] = []  # issued, not fed yet
        self._unrecorded: list[CallNode] = []  # fed to the acting detectors, not yet to the recording ones
        self._request: tuple[list[dict[str, Any]], Any, float, list[str] | None] | None = None  # read after
        self._results: dict[int | None, ToolResult] = {}
        self._reported: dict[tuple[str, int], dict[str, Any]] = {}
        self._finished: list[Finding] | None = None

    # -- the exchange's two moments --------------------------------------------------------------------

    def on_request(
        self, messages: list[dict[str, Any]], system: Any, now: float, fingerprints: list[str] | None = None
    ) -> Verdict:
        """A request is about to be answered: take its new messages, feed the calls they settle to the acting
        detectors, check the budgets; what to do with the request. ``fingerprints`` are the messages'
        fingerprints as the proxy derived them (once per request): only the messages past what the session
        has seen are then derived. Without an acting detector or a budget on tool calls or errors, the
        messages are only read once the answer went out (``on_answer``)."""
        if self.stopped is not None:
            return Verdict(refusal=self.stopped)
        verdict = Verdict()
        if self.plan.early:
            self._read(messages, system, now, fingerprints)
            self._settle(self.acting, verdict)
        else:
            self._request = (messages, system, now, fingerprints)
        self._check_budgets(now, verdict)
        self.events.extend(verdict.events)
        notes = [event.message for event in verdict.events if event.action == "warn"]
        if notes:
            verdict.note = "tracekit guard: " + " ".join(notes)
        stops = [event for event in verdict.events if event.action == "stop"]
        if stops:
            first = stops[0]
            self.stopped = verdict.refusal = (
                f"tracekit guard stopped this session (rule {first.rule}"
                f"{', ' + _figures(first.figures) if first.figures else ''}): {first.message}"
            )
        return verdict

    def on_answer(
        self,
        reply: dict[str, Any] | None,
        usage: Usage | None,
        now: float,
        refused: bool,
        fingerprint: str | None = None,
    ) -> list[Guard]:
        """The answer went out: feed the calls the request settled to the recording detectors, take the reply
        (its tool calls) and count its tokens (``fingerprint``: the reply's, as the proxy derived it). The
        events raised, for the trace (their action is ``record``)."""
        verdict = Verdict()
        self._catch_up(verdict)
        self.events.extend(verdict.events)
        if not refused:  # (a refused request was never made)
            self.model_calls += 1
            call = ModelCall(index=0, provider="guard", usage=usage or Usage(), t=now)
            self._take(self.builder.add_model_call(call, reply, fingerprint=fingerprint))
        return verdict.events

    def finish(self) -> list[Finding]:
        """The session is over: feed the calls left and return every finding (what offline analysis of
        the same trace reports)."""
        if self._finished is None:
            self._catch_up(Verdict())
            self._settle(self.acting, Verdict())
            self._catch_up(Verdict())
            if self.recording is None and self.plan.recording is not None:  # a session without a tool call
                self.recording = DetectorRun(self.context, self.plan.recording)
            header, *records = self.builder.records
            trace = Trace(header=header, records=records)
            self.context.trace = trace
            self.context.final_answer = trace.final_answer()
            findings = [*(self.acting.finish() if self.acting else []),
                        *(self.recording.finish() if self.recording else [])]  # fmt: skip
            # In registry order, as one run of every detector reports them (each detector's own order kept).
            findings.sort(key=lambda finding: _REGISTRY_ORDER.get(finding.kind, len(_REGISTRY_ORDER)))
            self._finished = findings
        return self._finished

    def status(self, now: float) -> dict[str, Any]:
        """Call counts, tokens and guard events so far (``GET /_tracekit/sessions``)."""
        return {
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "tokens": self.tokens,
            "tool_errors": self.errors,
            "seconds": round(now - self.started, 3),
            "stopped": self.stopped,
            "guard": [event.model_dump(exclude={"kind", "t", "model_call"}) for event in self.events],
        }

    # -- inside ----------------------------------------------------------------------------------------

    def _read(self, messages: list[dict[str, Any]], system: Any, now: float, fingerprints: list[str] | None) -> None:
        self._take(self.builder.add_conversation(messages, system, timestamp=now, fingerprints=fingerprints))

    def _settle(self, run: DetectorRun | None, verdict: Verdict) -> None:
        """The calls issued so far are settled (their results came, or never will): into the graph, to
        ``run``; the recording detectors get them later (``_catch_up``)."""
        for issued in self._calls:
            node = node_of(issued, self._results.get(issued.index), False)
            self.graph.add(node)
            if run is not None:
                for finding in run.observe(node):
                    self._finding_event(finding, verdict)
            self._unrecorded.append(node)
        self._calls = []

    def _catch_up(self, verdict: Verdict) -> None:
        """Read a request left for after its answer and feed the recording detectors what they have not seen."""
        if self._request is not None:
            self._read(*self._request)
            self._request = None
            self._settle(None, verdict)
        if not self._unrecorded or self.plan.recording is None:
            self._unrecorded = []
            return
        if self.recording is None:
            self.recording = DetectorRun(self.context, self.plan.recording)
        for node in self._unrecorded:
            for finding in self.recording.observe(node):
                self._finding_event(finding, verdict)
        self._unrecorded = []

    def _take(self, records: list[Any]) -> None:
        context = self.context
        for record in records:
            kind = record.kind
            if kind == "tool_call":
                self._calls.append(record)
                self.tool_calls += 1
            elif kind == "tool_result":
                self._results.setdefault(record.call_index, record)
                if record.is_error:
                    self.errors += 1
            elif kind == "user_message":
                if not context.user_turns or context.user_turns[-1] != record.message_index:
                    context.user_turns.append(record.message_index)
                context.message_texts.append((record.message_index, content_text(record.content)))
            elif kind == "system_message":
                context.message_texts.append((-1, content_text(record.content)))
            elif kind == "assistant_message" and _speaks(record.content):
                context.agent_text_turns.append(record.message_index)
            elif kind == "model_call" and record.usage is not None:
                usage = record.usage
                counted = (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens,
                           usage.cache_creation_input_tokens)  # fmt: skip
                self.tokens += sum(value or 0 for value in counted)

    def _finding_event(self, finding: Finding, verdict: Verdict) -> None:
        identity = (finding.kind, (finding.calls or finding.messages or [-1])[0])
        value = finding.to_dict()
        if self._reported.get(identity) == value:
            return
        first_time = identity not in self._reported
        self._reported[identity] = value
        action = self.config.action_for(finding.kind)
        if not first_time and action != "record":
            action = "record"  # the finding grew: recorded again, acted on once
        self._event(verdict, "finding", finding.kind, action, finding.message, log_it=first_time,
                    severity=finding.severity, calls=finding.calls, messages=finding.messages,
                    figures={"calls": len(finding.calls)})  # fmt: skip

    def _check_budgets(self, now: float, verdict: Verdict) -> None:
        if not self._budgets:
            return
        used_by_name = {
            "tokens": self.tokens,
            "model_calls": self.model_calls + 1,  # the request about to be made included
            "tool_calls": self.tool_calls,
            "seconds": round(now - self.started, 3),
            "errors": self.errors,
        }
        fired = []
        for name, limit, action in self._budgets:
            used = used_by_name[name]
            if used <= limit:
                continue
            fired.append(name)
            shown = int(limit) if float(limit).is_integer() else limit
            message = f"the session used {used} {_BUDGET_TEXT[name]}, over its budget of {shown}."
            self._event(verdict, "budget", name, action, message, figures={"used": used, "limit": shown})
        if fired:  # each budget fires once
            self._budgets = [budget for budget in self._budgets if budget[0] not in fired]

    def _event(
        self, verdict: Verdict, event: str, rule: str, action: Action, message: str, log_it: bool = True, **fields: Any
    ) -> None:
        record = Guard(event=event, rule=rule, action=action, message=message, **fields)
        verdict.events.append(record)
        if log_it:  # a finding that grows is logged once, when it first forms
            log.warning("tracekit guard: session %s: %s %s -> %s: %s", self.session, event, rule, action, message)


_BUDGET_TEXT = {
    "tokens": "tokens (input + output)",
    "model_calls": "model calls",
    "tool_calls": "tool calls",
    "seconds": "seconds",
    "errors": "tool errors",
}


class SessionPlan:
    """What a guard file asks of every session, worked out once per guard (not once per session).

    ``acting`` and ``recording``: the detector options of the detectors whose findings are acted on
    (``warn``, ``stop``) and of the others, each with the other side switched off (None: no detector on
    that side); ``budgets``: the budgets in force; ``early``: whether a request's messages are needed
    before it is answered (an acting detector, or a budget on tool calls or errors).

    Example::

        plan = SessionPlan(config, config.detector_options())
        GuardSession("s1", config, plan.options, started=time.time(), plan=plan)
    """

    def __init__(self, config: GuardConfig, options: dict[str, dict[str, Any]]) -> None:
        self.options = options
        sides: dict[bool, dict[str, dict[str, Any]]] = {True: {}, False: {}}
        for kind, settings in options.items():
            acts = config.action_for(kind) != "record"
            sides[acts][kind] = settings
            sides[not acts][kind] = {**settings, "enabled": False}
        self.acting = sides[True] if _any_on(sides[True]) else None
        self.recording = sides[False] if _any_on(sides[False]) else None
        given = ((name, getattr(config.budgets, name)) for name in BUDGETS)
        self.budgets: list[tuple[str, float, Action]] = [
            (name, budget.limit, budget.action) for name, budget in given if budget is not None
        ]
        self.early = self.acting is not None or any(name in ("tool_calls", "errors") for name, _, _ in self.budgets)


def _any_on(options: dict[str, dict[str, Any]]) -> bool:
    return any(settings.get("enabled", True) for settings in options.values())


_REGISTRY_ORDER = {kind: position for position, kind in enumerate(REGISTRY)}


def _figures(figures: dict[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in figures.items())


def _speaks(blocks: list[dict[str, Any]]) -> bool:
    """An agent message with text and no tool call (as ``DetectorContext.agent_text_turns`` counts them)."""
    spoke = False
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_use" or kind == "server_tool_use":
            return False
        if kind == "text" and str(block.get("text", "")).strip():
            spoke = True
    return spoke
