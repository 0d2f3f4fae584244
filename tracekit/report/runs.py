"""The report's view of one ``traces[]`` entry: a ``Run``, with the labels and texts the pages show.

The results are read once, by the typed model (``tracekit.results.model``); a ``Run`` wraps one
``TraceResult`` and adds only presentation: its label, its position in the report, checks and the judge's
verdict as display text. Nothing here reinterprets or recomputes the analysis.

Example::

    runs = [Run(position, entry) for position, entry in enumerate(results.traces)]
    failing = [run for run in runs if run.result == "fail"]

Which runs a report lists, and in what order: ``report.run_order``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, cast, overload

import orjson

from tracekit.results.model import CheckEntry, FindingEntry, GuardEntry, ToolCallEntry, TraceResult
from tracekit.results.summary import RESULTS

__all__ = ["RANK", "RESULTS", "CheckView", "Judgement", "Run", "RunKey", "short_run_name"]

#: How good a verdict is, for comparisons (pending has no rank: it is not a verdict yet).
RANK = {"pass": 2, "acceptable": 1, "fail": 0}

#: Keys of ``meta`` that hold an importer's own outcome of the trace, in order of preference.
OUTCOME_KEYS = ("reward", "outcome", "score", "success")

Finding = FindingEntry
"""A detector finding, as the results give it."""

_T = TypeVar("_T")


@dataclass
class CheckView:
    """One check of a verdict as the pages show it: values that are not text shown as one-line JSON."""

    name: str
    result: str
    evidence: str
    calls: list[int] = field(default_factory=list)
    kind: str | None = None
    """The failure kind a judged check names."""
    expected: str = ""
    """What the case asked for (when the check says)."""
    actual: str = ""
    """What the agent did instead (when the check says)."""
    judged: bool = False
    """True for the judge's checks (shown with the judge's quotes)."""

    @classmethod
    def of(cls, check: CheckEntry) -> CheckView:
        """The view of a check of the results."""
        return cls(
            name=check.check,
            result=check.result,
            evidence=check.evidence,
            calls=list(check.calls),
            kind=check.failure_kind,
            expected=_compact(check.expected),
            actual=_compact(check.actual),
            judged=check.judged,
        )


@dataclass
class Judgement:
    """The judge's verdict on a run, with the quotes it based it on."""

    result: str
    reasoning: str
    quotes: list[str]
    model: str | None = None
    note: str = ""
    """Why there is no verdict, or how a majority was reached."""


@dataclass(frozen=True, slots=True)
class RunKey:
    """What a ``Run`` keeps of its entry when the entry itself is not held (a results file read entry by
    entry, ``tracekit.results.stream``): the fields that order, group and label every run of a report."""

    trace_id: str
    case_id: str | None
    run_name: str | None
    group: str | None
    repeat: int | None
    result: str | None
    source: str | None
    stopped: bool
    """Whether the live guard stopped the session."""
    guarded: bool
    """Whether the live guard noticed anything in the session (``traces[].guard``)."""
    dimension: str | None
    category: str | None

    @classmethod
    def of(cls, entry: TraceResult) -> RunKey:
        """The key of an entry."""
        verdict = entry.verdict
        return cls(entry.trace_id, entry.case_id, entry.run, entry.group or None, entry.repeat, entry.result,
                   entry.source, any(event.action == "stop" for event in entry.guard), bool(entry.guard),
                   verdict.dimension if verdict is not None else None,
                   verdict.category if verdict is not None else None)  # fmt: skip


class _Forwarded(Generic[_T]):
    """A ``Run`` attribute that is the attribute of the same name of the run's ``key`` or of its ``entry``
    (``via``): what a run shows of its trace, read where it is kept."""

    def __init__(self, via: Literal["key", "entry"]) -> None:
        self._via = via
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, run: None, owner: type) -> _Forwarded[_T]: ...

    @overload
    def __get__(self, run: Run, owner: type | None = None) -> _T: ...

    def __get__(self, run: Run | None, owner: type | None = None) -> _T | _Forwarded[_T]:
        if run is None:
            return self
        return cast(_T, getattr(getattr(run, self._via), self._name))


class Run:
    """One trace of the results: a case × group × repeat of a run, or a trace bound to no case.

    (A report's ``Run`` is one trace; the *run* it belongs to, ``run_name``, is what made it: one model or
    policy run over the case library, e.g. ``run:reference-agent/model-x``.)

    ``Run(position, entry)`` holds its entry; ``Run.stored(position, key, fetch)`` holds only its ``RunKey``
    and asks ``fetch(position)`` for the entry when a page needs more (a large results file read entry by
    entry: ``tracekit.report.writer``)."""

    __slots__ = ("_entry", "_fetch", "key", "position", "show_run", "usage_reported")

    def __init__(self, position: int, entry: TraceResult, show_run: bool = False,
                 usage_reported: bool | None = None) -> None:  # fmt: skip
        self.position = position
        """Position in ``traces[]`` (keeps duplicates apart)."""
        self._entry: TraceResult | None = entry
        self._fetch: Callable[[int], TraceResult] | None = None
        self.key = RunKey.of(entry)
        self.show_run = show_run
        """True when the results hold several runs: labels then name the run too."""
        self.usage_reported = usage_reported
        """Whether the trace's model calls carried token usage: set by the HTML writer from the trace file it
        reads (None: the file was not read; then a total of 0 is taken as no usage, since a provider that
        reports usage reports some input tokens)."""

    @classmethod
    def stored(cls, position: int, key: RunKey, fetch: Callable[[int], TraceResult]) -> Run:
        """A run that keeps only its key; its entry is ``fetch(position)`` when asked for."""
        run = cls.__new__(cls)
        run.position, run._entry, run._fetch, run.key = position, None, fetch, key
        run.show_run, run.usage_reported = False, None
        return run

    @property
    def entry(self) -> TraceResult:
        """The entry of the results, as analyze wrote it."""
        if self._entry is not None:
            return self._entry
        assert self._fetch is not None
        return self._fetch(self.position)

    def __repr__(self) -> str:
        return f"Run({self.position}, {self.label!r})"

    trace_id = _Forwarded[str]("key")
    case_id = _Forwarded[str | None]("key")
    group = _Forwarded[str | None]("key")
    repeat = _Forwarded[int | None]("key")
    source = _Forwarded[str | None]("key")
    """The trace file as the results name it (``traces[].source``)."""
    session = _Forwarded[str | None]("entry")
    meta = _Forwarded[Mapping[str, Any]]("entry")
    run_name = _Forwarded[str | None]("key")
    """The run the trace belongs to (``traces[].run``: header source / model)."""
    result = _Forwarded[str | None]("key")
    """pass / acceptable / fail / pending; None when the trace is bound to no case."""
    dimension = _Forwarded[str | None]("key")
    category = _Forwarded[str | None]("key")
    tool_calls = _Forwarded[list[ToolCallEntry]]("entry")
    findings = _Forwarded[list[FindingEntry]]("entry")
    problems = _Forwarded[list[str]]("entry")

    @property
    def stats(self) -> dict[str, Any]:
        return self.entry.stats.to_plain()

    @property
    def checks(self) -> list[CheckView]:
        """The machine checks, then the judged ones."""
        verdict = self.entry.verdict
        return [CheckView.of(check) for check in verdict.all_checks] if verdict is not None else []

    @property
    def failed_checks(self) -> list[CheckView]:
        """Checks whose result is fail (acceptable ones are not failures)."""
        return [check for check in self.checks if check.result == "fail"]

    @property
    def guard_stop(self) -> GuardEntry | None:
        """The live guard's ``stop`` that ended the session (``record --guard``), if one did."""
        if not self.key.stopped:
            return None
        return next((event for event in self.entry.guard if event.action == "stop"), None)

    @property
    def why(self) -> str:
        """Why the trace is not a pass, in a line: the guard's stop, else the first failing check's evidence,
        else the worst finding's message (empty when there is none of them)."""
        stop = self.guard_stop
        if stop is not None:
            return f"stopped by the guard ({stop.rule}): {stop.message}" if stop.message else \
                f"stopped by the guard ({stop.rule})"
        for check in self.failed_checks:
            return f"{check.name}: {check.evidence}" if check.evidence else check.name
        order = {"error": 0, "warning": 1, "info": 2}
        worst = min(self.findings, key=lambda finding: order.get(finding.severity, 3), default=None)
        return f"{worst.kind}: {worst.message}" if worst is not None else ""

    @property
    def outcome(self) -> str:
        """The outcome an importer kept in the trace's meta (tau-bench ``reward``, else ``outcome`` / ``score``;
        empty when none): an imported trace's own result, beside tracekit's verdict."""
        for key in OUTCOME_KEYS:
            value = self.meta.get(key)
            if value is not None and not isinstance(value, (dict, list)):
                return f"{key} {value}"
        return ""

    @property
    def grade_note(self) -> str:
        """Why a good tool-use grade stands beside a failing verdict (empty when they agree): the score rates
        tool choice, parameters, recovery and efficiency; the verdict is decided by the case's checks."""
        verdict = self.entry.verdict
        if verdict is None or verdict.result != "fail" or verdict.scores.tool_use.total < 60:
            return ""
        tool_use = verdict.scores.tool_use
        cause = self.why or "a check of the case"
        return (f"Tool-use score {tool_use.total} ({tool_use.grade}) but verdict fail: the score rates tool "
                f"choice, parameters, recovery and efficiency (seed 003); the verdict follows the case's checks, "
                f"and this one failed on {cause}")

    @property
    def scores(self) -> dict[str, Any]:
        """The verdict's scores without the attribution (shown on its own), as plain values."""
        if self.entry.verdict is None:
            return {}
        return {name: value for name, value in self.entry.verdict.scores.to_plain().items() if name != "attribution"}

    @property
    def attribution(self) -> Any:
        """The failure attribution record (seed 004: type, symptom, root cause, fix) of a failing run."""
        return self.entry.verdict.scores.attribution if self.entry.verdict is not None else None

    @property
    def diagnosis(self) -> Any:
        """Where a failed trace went wrong first (``traces[].diagnosis``: critical step, category, evidence)."""
        return getattr(self.entry, "diagnosis", None)

    @property
    def failure_modes(self) -> list[str]:
        """The attributed failure modes of the verdict."""
        return list(dict.fromkeys(self.entry.verdict.failure_modes)) if self.entry.verdict is not None else []

    @property
    def judge_state(self) -> str | None:
        """Where the judged part came from: not_needed, kept, new, mixed, judged, pending or error."""
        return self.entry.verdict.judge if self.entry.verdict is not None else None

    @property
    def parts(self) -> Any:
        """Both parts of a verdict that uses the judge (``auto``, ``judge``, ``judge_model``), when given."""
        return self.entry.verdict.parts if self.entry.verdict is not None else None

    @property
    def judgement(self) -> Judgement | None:
        """The judge's verdict, from its judged check (None when no judge answered for this trace)."""
        verdict = self.entry.verdict
        judged = (verdict.judged_checks or []) if verdict is not None else []
        for check in judged:
            judge = check.judge
            if judge is None:
                continue
            return Judgement(
                result=check.result,
                reasoning="\n".join(judge.reasons),
                quotes=[quote.text for quote in judge.quotes if quote.text],
                model=judge.model or None,
                note=judge.note or judge.error or "",
            )
        return None

    @property
    def label(self) -> str:
        """``CASE-01 A#0``: the case with its group and repeat (and run, when there are several), or the
        trace id."""
        if self.case_id is None:
            return self.trace_id
        return f"{self.case_id}{self.variant}"

    @property
    def variant(self) -> str:
        """`` A#0``: group and repeat, as a suffix (empty when neither is known); `` A#0 · policy-x``
        when the results hold several runs."""
        text = ""
        if self.group:
            text += f" {self.group}"
        if self.repeat is not None:
            text += f"#{self.repeat}"
        if self.show_run and self.run_name:
            text += f" · {self.run_short}"
        return text

    @property
    def run_short(self) -> str:
        """The run's name without the ``run:`` prefix every ``tracekit run`` trace has (``-``: none)."""
        return short_run_name(self.run_name)

    @property
    def tokens(self) -> int:
        """Input plus output tokens (0 also when no usage was reported: see ``token_count``)."""
        return self.entry.stats.input_tokens + self.entry.stats.output_tokens

    @property
    def has_usage(self) -> bool:
        """Whether the provider reported token usage for this trace (see ``usage_reported``)."""
        return self.usage_reported if self.usage_reported is not None else self.tokens > 0

    @property
    def token_count(self) -> int | None:
        """Input plus output tokens; None (shown as "unknown") when no usage was reported, 0 only when the
        provider reported 0."""
        return self.tokens if self.has_usage else None

    @property
    def input_token_count(self) -> int | None:
        """Input tokens, None when no usage was reported."""
        return self.entry.stats.input_tokens if self.has_usage else None

    @property
    def output_token_count(self) -> int | None:
        """Output tokens, None when no usage was reported."""
        return self.entry.stats.output_tokens if self.has_usage else None

    @property
    def latency_ms(self) -> float | None:
        """Total model latency when the analysis reported it."""
        value = self.entry.stats.get("latency_ms")
        return float(value) if isinstance(value, (int, float)) else None


def short_run_name(name: str | None) -> str:
    """``run:policy-x`` -> ``policy-x``; None -> ``-``."""
    if not name:
        return "-"
    return name[len("run:"):] if name.startswith("run:") else name


def _compact(value: Any) -> str:
    """One-line JSON of a value (a string as is): expected/actual values read best inline."""
    if value is None or isinstance(value, str):
        return value or ""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)
