"""The report's view of the analyze JSON: one ``Run`` per ``traces[]`` entry, read tolerantly.

The analyze JSON (DESIGN.md "Contracts") guarantees a few fields and grows others over time. This
module is the one place that knows which optional fields the report reads and what it assumes when
they are missing, so templates and writers work on plain, complete values.

Example::

    runs = runs_from_results(results)
    failing = [run for run in runs if run.result == "fail"]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Verdict results in the order reports show them.
RESULTS = ("pass", "acceptable", "fail", "pending")

#: How good a verdict is, for comparisons (pending has no rank: it is not a verdict yet).
RANK = {"pass": 2, "acceptable": 1, "fail": 0}

_CASE_ID = re.compile(r"^(?:(?P<dim>[A-Z][A-Z0-9])-(?P<cat>[A-Z]{2})-\d+|(?P<tt>TT)-\d+)$")


@dataclass
class Check:
    """One check of a verdict, with its evidence and the calls it names."""

    name: str
    result: str
    evidence: str
    calls: list[int] = field(default_factory=list)
    kind: str | None = None
    expected: str = ""
    """What the case asked for (when the check says)."""
    actual: str = ""
    """What the agent did instead (when the check says)."""
    judged: bool = False
    """True for the judge's checks (shown with the judge's quotes)."""
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Judgement:
    """The judge's verdict on a run, with the quotes it based it on."""

    result: str
    reasoning: str
    quotes: list[str]
    model: str | None = None
    note: str = ""
    """Why there is no verdict, or how a majority was reached."""


@dataclass
class Finding:
    """A detector finding on the calls it names."""

    kind: str
    severity: str
    calls: list[int]
    message: str


@dataclass
class Run:
    """One trace of the results: a case × group × repeat of a run, or a trace bound to no case.

    (A report's ``Run`` is one trace; the *run* it belongs to, ``run_name``, is what made it: one model or
    policy run over the case library, e.g. ``run:scripted:reference``.)"""

    position: int
    """Position in ``traces[]`` (keeps duplicates apart)."""
    trace_id: str
    case_id: str | None
    group: str | None
    repeat: int | None
    source: str | None
    session: str | None
    meta: Mapping[str, Any]
    dimension: str | None
    category: str | None
    result: str | None
    """pass / acceptable / fail / pending; None when the trace is bound to no case."""
    stats: dict[str, Any]
    tool_calls: list[dict[str, Any]]
    findings: list[Finding]
    checks: list[Check]
    scores: dict[str, Any]
    judgement: Judgement | None
    failure_modes: list[str]
    attribution: Mapping[str, Any] | None
    """The failure attribution record (seed 004: type, symptom, root cause, fix) of a failing run."""
    judge_state: str | None
    """Where the judged part came from, when the analysis says: not_needed, kept, new, mixed, judged,
    pending or error (older results: missing / cached)."""
    parts: Mapping[str, Any] | None
    """Both parts of a verdict that uses the judge (``auto``, ``judge``, ``judge_model``), when given."""
    problems: list[str]
    raw: Mapping[str, Any]
    run_name: str | None = None
    """The run the trace belongs to (``traces[].run``: header source / model), when the results say."""
    show_run: bool = False
    """True when the results hold several runs: labels then name the run too."""

    @property
    def label(self) -> str:
        """``B2-PC-02 A#0``: the case with its group and repeat (and run, when there are several), or the
        trace id."""
        if self.case_id is None:
            return self.trace_id
        return f"{self.case_id}{self.variant}"

    @property
    def variant(self) -> str:
        """`` A#0``: group and repeat, as a suffix (empty when neither is known); `` A#0 · scripted:flawed``
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
        """Input plus output tokens."""
        return int(self.stats.get("input_tokens") or 0) + int(self.stats.get("output_tokens") or 0)

    @property
    def latency_ms(self) -> float | None:
        """Total model latency when the analysis reported it."""
        value = self.stats.get("latency_ms")
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def failed_checks(self) -> list[Check]:
        """Checks whose result is fail (acceptable ones are not failures)."""
        return [check for check in self.checks if check.result == "fail"]


def runs_from_results(results: Mapping[str, Any]) -> list[Run]:
    """Every ``traces[]`` entry of an analyze JSON as a ``Run``, in the order given (labels name the run
    when there are several)."""
    traces = results.get("traces") or []
    runs = [run_from_entry(position, entry) for position, entry in enumerate(traces) if isinstance(entry, Mapping)]
    if len(run_names(runs)) > 1:
        for run in runs:
            run.show_run = True
    return runs


def run_names(runs: Iterable[Run]) -> list[str | None]:
    """The distinct runs of traces bound to cases, sorted by name (None, "no run named", last)."""
    names = {run.run_name for run in runs if run.case_id is not None}
    return sorted(names, key=lambda name: (name is None, name or ""))


def short_run_name(name: str | None) -> str:
    """``run:scripted:flawed`` -> ``scripted:flawed``; None -> ``-``."""
    if not name:
        return "-"
    return name[len("run:"):] if name.startswith("run:") else name


def run_from_entry(position: int, entry: Mapping[str, Any]) -> Run:
    """One ``traces[]`` entry as a ``Run``; missing optional fields get neutral values."""
    verdict = entry.get("verdict") if isinstance(entry.get("verdict"), Mapping) else None
    check_items = [*_list(verdict, "checks"), *_list(verdict, "judged_checks")]
    scores = dict(as_mapping(verdict.get("scores"))) if verdict is not None else {}
    case_id = _text_or_none(entry.get("case_id"))
    dimension, category = _dimension_category(entry, verdict, case_id)
    result = str(verdict.get("result") or "pending") if verdict is not None else None
    repeat = entry.get("repeat")
    return Run(
        position=position,
        trace_id=str(entry.get("trace_id") or f"trace-{position}"),
        case_id=case_id,
        group=_text_or_none(entry.get("group")),
        repeat=repeat if isinstance(repeat, int) and not isinstance(repeat, bool) else None,
        source=_text_or_none(entry.get("source")),
        session=_text_or_none(entry.get("session")),
        meta=as_mapping(entry.get("meta")),
        dimension=dimension,
        category=category,
        result=result,
        stats=dict(entry.get("stats") or {}),
        tool_calls=[dict(call) for call in entry.get("tool_calls") or [] if isinstance(call, Mapping)],
        findings=[_finding(item) for item in entry.get("findings") or [] if isinstance(item, Mapping)],
        checks=[_check(item, i) for i, item in enumerate(check_items) if isinstance(item, Mapping)],
        scores={key: value for key, value in scores.items() if key != "attribution"},
        judgement=_judgement(entry, verdict, check_items),
        failure_modes=_failure_modes(entry, verdict),
        attribution=_attribution(entry, verdict, scores),
        judge_state=_text_or_none(verdict.get("judge")) if verdict is not None and isinstance(
            verdict.get("judge"), str) else None,
        parts=verdict.get("parts") if verdict is not None and isinstance(verdict.get("parts"), Mapping) else None,
        problems=[str(problem) for problem in entry.get("problems") or []],
        raw=entry,
        run_name=_text_or_none(entry.get("run")),
    )


def split_case_id(case_id: str) -> tuple[str | None, str | None]:
    """Dimension and category from a case id: ``B2-PC-02`` -> (B2, PC); ``TT-03`` -> (TT, TT)."""
    match = _CASE_ID.match(case_id)
    if match is None:
        return None, None
    if match["tt"]:
        return "TT", "TT"
    return match["dim"], match["cat"]


def run_key(run: Run, with_run: bool = True) -> tuple[str, str, str, str]:
    """What identifies a trace across two analyses (for the baseline): run, case, group, repeat; or the
    trace id. ``with_run=False`` leaves the run out (a baseline made before results named runs)."""
    if run.case_id is None:
        return ("", "", "", run.trace_id)
    name = (run.run_name or "") if with_run else ""
    return (name, run.case_id, run.group or "", "" if run.repeat is None else str(run.repeat))


def sort_runs(runs: Iterable[Run]) -> list[Run]:
    """Runs bound to cases first (by case, run, group, repeat), then the others by trace id."""
    def key(run: Run) -> tuple[Any, ...]:
        bound = run.case_id is not None
        return (
            0 if bound else 1,
            run.case_id or "",
            run.run_name or "",
            run.group or "",
            -1 if run.repeat is None else run.repeat,
            run.trace_id,
            run.position,
        )

    return sorted(runs, key=key)


# --------------------------------------------------------------------------- tolerant readers


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one (for optional JSON objects)."""
    return value if isinstance(value, Mapping) else {}


def _text_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _list(mapping: Mapping[str, Any] | None, key: str) -> list[Any]:
    if mapping is None:
        return []
    value = mapping.get(key)
    return list(value) if isinstance(value, list) else []


def _dimension_category(
    entry: Mapping[str, Any], verdict: Mapping[str, Any] | None, case_id: str | None
) -> tuple[str | None, str | None]:
    for source in (entry, verdict or {}):
        dimension, category = source.get("dimension"), source.get("category")
        if dimension:
            return str(dimension), str(category) if category else None
    if case_id is None:
        return None, None
    return split_case_id(case_id)


def _finding(item: Mapping[str, Any]) -> Finding:
    return Finding(
        kind=str(item.get("kind") or "finding"),
        severity=str(item.get("severity") or "warning"),
        calls=_int_list(item.get("calls")),
        message=str(item.get("message") or ""),
    )


def _check(item: Mapping[str, Any], index: int) -> Check:
    name = item.get("name") or item.get("check") or item.get("id") or item.get("kind") or f"check {index + 1}"
    result = item.get("result") or item.get("status")
    if result is None and "passed" in item:
        result = "pass" if item.get("passed") else "fail"
    evidence = item.get("evidence")
    if evidence is None:
        evidence = item.get("message") or item.get("detail") or item.get("reason") or ""
    return Check(
        name=str(name),
        result=str(result or "pending"),
        evidence=_plain(evidence),
        calls=_int_list(item.get("calls")),
        kind=_text_or_none(item.get("kind") or item.get("failure_kind")),
        expected=_compact(item.get("expected")),
        actual=_compact(item.get("actual")),
        judged=isinstance(item.get("judge"), Mapping),
        raw=item,
    )


def _judgement(
    entry: Mapping[str, Any], verdict: Mapping[str, Any] | None, checks: list[Any]
) -> Judgement | None:
    """The judge's verdict: a judged check (``{"check": "judge", "result", "judge": {reasons, quotes}}``)
    or a ``judge`` object on the verdict or the entry."""
    judge: Mapping[str, Any] | None = None
    result = None
    for check in checks:
        if isinstance(check, Mapping) and isinstance(check.get("judge"), Mapping):
            judge, result = check["judge"], check.get("result")
            break
    if judge is None:
        for source in (verdict or {}, entry):
            if isinstance(source.get("judge"), Mapping):
                judge = source["judge"]
                break
    if judge is None:
        return None
    quotes = []
    for quote in judge.get("quotes") or []:
        if isinstance(quote, Mapping):
            quote = quote.get("text") or quote.get("quote") or ""
        if quote:
            quotes.append(str(quote))
    reasons = judge.get("reasons")
    reasoning = "\n".join(map(str, reasons)) if isinstance(reasons, list) else reasons
    reasoning = reasoning or judge.get("reasoning") or judge.get("rationale") or ""
    return Judgement(
        result=str(result or judge.get("result") or judge.get("verdict") or "pending"),
        reasoning=_plain(reasoning),
        quotes=quotes,
        model=_text_or_none(judge.get("model")),
        note=_plain(judge.get("note") or judge.get("error") or ""),
    )


def _attribution(
    entry: Mapping[str, Any], verdict: Mapping[str, Any] | None, scores: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    for value in (scores.get("attribution"), (verdict or {}).get("attribution"), entry.get("attribution")):
        if isinstance(value, Mapping):
            return value
    return None


def _failure_modes(entry: Mapping[str, Any], verdict: Mapping[str, Any] | None) -> list[str]:
    modes: list[str] = []
    for source in (entry, verdict or {}):
        for key in ("failure_modes", "failure_mode", "attribution"):
            value = source.get(key)
            values = value if isinstance(value, list) else [value] if value else []
            for item in values:
                if isinstance(item, Mapping):
                    item = item.get("failure_kind") or item.get("kind") or item.get("mode") or item.get("name")
                if item and str(item) not in modes:
                    modes.append(str(item))
    return modes


def _int_list(value: Any) -> list[int]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, int) and not isinstance(item, bool)]


def _compact(value: Any) -> str:
    """One-line JSON of a value (a string as is): expected/actual values read best inline."""
    if value is None or isinstance(value, str):
        return value or ""
    import orjson

    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def _plain(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    import orjson

    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        return str(value)
