"""Comparisons the index leads with: skill group A against group B on the same cases, and this run
against a baseline (an earlier results JSON).

The A/B figures are the analyze JSON's (``summary.ab``, computed once by ``tracekit.analyze.comparison``:
pairs within each run, pass rates counting ``pass`` only); this module only arranges them into rows and
finds the traces of the cases that changed. The baseline diff is ``tracekit diff``'s engine
(``tracekit.diff.diff_results``), its pairs mapped back to the report's runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tracekit import __version__
from tracekit.diff import diff_results
from tracekit.report.run_order import sort_runs
from tracekit.report.runs import RANK, Run, short_run_name
from tracekit.report.summary import Tally
from tracekit.results.model import Results
from tracekit.results.summary import GroupFigures, ResultsSummary


@dataclass
class GroupStats:
    """Verdicts and costs of one group's runs within a dimension (or overall)."""

    tally: Tally
    tokens: float | None
    """Mean input+output tokens per run."""
    tool_calls: float | None
    """Mean tool calls per run."""


@dataclass
class GroupDelta:
    """One row of the A/B table: the same cases under both groups."""

    label: str
    a: GroupStats
    b: GroupStats
    delta: float | None = None
    """B's pass rate minus A's, as the summary gives it."""

    @property
    def pass_rate_delta(self) -> float | None:
        """B's pass rate minus A's, in percentage points (None when a group has no decided verdict)."""
        if self.a.tally.pass_rate is None or self.b.tally.pass_rate is None or self.delta is None:
            return None
        return 100 * self.delta

    @property
    def tokens_delta(self) -> float | None:
        return _difference(self.b.tokens, self.a.tokens)

    @property
    def tool_calls_delta(self) -> float | None:
        return _difference(self.b.tool_calls, self.a.tool_calls)


@dataclass
class CaseChange:
    """A case whose verdicts differ between the groups (within one run)."""

    case_id: str
    a_runs: list[Run]
    b_runs: list[Run]
    a_score: float
    b_score: float
    run_name: str | None = None
    """The run both groups' traces belong to."""

    @property
    def label(self) -> str:
        """The case id, with the run when the results hold several."""
        runs = self.a_runs + self.b_runs
        return f"{self.case_id} · {short_run_name(self.run_name)}" if runs and runs[0].show_run else self.case_id

    @property
    def better(self) -> bool:
        """True when group B did better than group A."""
        return self.b_score > self.a_score


@dataclass
class GroupComparison:
    """Group A against group B over the cases both ran."""

    a_name: str
    b_name: str
    overall: GroupDelta
    dimensions: list[GroupDelta]
    changed: list[CaseChange]
    shared_cases: int
    """(run, case) pairs that ran in both groups."""
    runs: list[GroupDelta] = field(default_factory=list)
    """One row per run (labelled with its short name) when the results hold several runs."""


def compare_groups(summary: ResultsSummary | None, runs: Iterable[Run]) -> GroupComparison | None:
    """Group A against group B as the summary compares them (None when no case ran in both), with the traces
    of the cases whose pass rates differ."""
    ab = summary.ab if summary is not None else None
    if summary is None or ab is None:
        return None
    by_task: dict[tuple[str | None, str, str], list[Run]] = {}
    for run in runs:
        if run.case_id is not None and run.group in ("A", "B"):
            by_task.setdefault((run.run_name, run.case_id, run.group), []).append(run)
    changed = []
    for pair in ab.per_case.values():
        if pair.better not in ("A", "B") or pair.A.pass_rate is None or pair.B.pass_rate is None:
            continue
        a_runs = sort_runs(by_task.get((pair.run, pair.case_id, "A"), []))
        b_runs = sort_runs(by_task.get((pair.run, pair.case_id, "B"), []))
        changed.append(CaseChange(pair.case_id, a_runs, b_runs, pair.A.pass_rate, pair.B.pass_rate, pair.run))
    changed.sort(key=lambda change: (change.better, -abs(change.b_score - change.a_score), change.case_id,
                                     change.run_name or ""))  # fmt: skip
    with_pairs = [run for run in summary.runs if run.ab is not None]
    per_run = [
        _delta(short_run_name(run.run), run.ab.A, run.ab.B, run.ab.pass_rate_delta)
        for run in with_pairs
        if run.ab is not None
    ] if len(with_pairs) > 1 else []  # fmt: skip
    return GroupComparison(
        a_name="A",
        b_name="B",
        overall=_delta("all", ab.A, ab.B, ab.pass_rate_delta),
        dimensions=[_delta(name, pair.A, pair.B, pair.pass_rate_delta) for name, pair in ab.by_dimension.items()],
        changed=changed,
        shared_cases=ab.cases,
        runs=per_run,
    )


@dataclass
class BaselineChange:
    """A run whose verdict moved against the baseline."""

    run: Run
    before: Run

    @property
    def regression(self) -> bool:
        return RANK.get(self.run.result or "", -1) < RANK.get(self.before.result or "", -1)


@dataclass
class BaselineDiff:
    """This run against an earlier one, as ``tracekit diff`` pairs and judges them (``tracekit.diff``)."""

    regressions: list[BaselineChange]
    improvements: list[BaselineChange]
    new: list[Run]
    """Runs with no counterpart in the baseline."""
    missing: list[Run]
    """Baseline runs with no counterpart now."""
    unchanged: int
    flaky: list[BaselineChange] = field(default_factory=list)
    """Runs of a task whose repeats disagree on a side (judged on the repeats together: not a regression)."""


def diff_baseline(runs: Iterable[Run], baseline: Iterable[Run]) -> BaselineDiff:
    """Regressions and improvements against the baseline, worst first: the pairs of ``tracekit diff``
    (case × group × repeat, within a run when both sides name the same runs; a task's repeats judged
    together, so a task whose repeats disagree is flaky, not a regression)."""
    runs, baseline = list(runs), list(baseline)
    # Each entry fetched once: a run read from a results file gives a new object on every fetch.
    now_entries, before_entries = [run.entry for run in runs], [run.entry for run in baseline]
    diff = diff_results(Results(tracekit=__version__, traces=before_entries),
                        Results(tracekit=__version__, traces=now_entries))  # fmt: skip
    now_of = {id(entry): run for entry, run in zip(now_entries, runs, strict=True)}
    before_of = {id(entry): run for entry, run in zip(before_entries, baseline, strict=True)}
    found: dict[str, list[BaselineChange]] = {"regression": [], "improvement": [], "flaky": []}
    new: list[Run] = []
    missing: list[Run] = []
    unchanged = 0
    for pair in diff.pairs:
        old, now = pair.traces
        run = now_of.get(id(now)) if now is not None else None
        before = before_of.get(id(old)) if old is not None else None
        if run is not None and before is not None and pair.change in found:
            found[pair.change].append(BaselineChange(run, before))
        elif pair.change == "added" and run is not None:
            new.append(run)
        elif pair.change == "removed" and before is not None:
            missing.append(before)
        else:
            unchanged += 1

    def order(change: BaselineChange) -> tuple[int, str, int]:
        drop = RANK.get(change.before.result or "", 0) - RANK.get(change.run.result or "", 0)
        return (-abs(drop), change.run.label, change.run.position)

    return BaselineDiff(
        regressions=sorted(found["regression"], key=order),
        improvements=sorted(found["improvement"], key=order),
        new=sort_runs(new),
        missing=sort_runs(missing),
        unchanged=unchanged,
        flaky=sorted(found["flaky"], key=order),
    )


def _delta(label: str, a: GroupFigures, b: GroupFigures, delta: float) -> GroupDelta:
    return GroupDelta(label, _group_stats(label, a), _group_stats(label, b), delta)


def _group_stats(label: str, figures: GroupFigures) -> GroupStats:
    return GroupStats(tally=Tally.written(label, figures.results, figures.pass_rate), tokens=figures.mean_tokens,
                      tool_calls=figures.mean_tool_calls)  # fmt: skip


def _difference(b: float | None, a: float | None) -> float | None:
    return None if a is None or b is None else b - a
