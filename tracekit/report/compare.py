"""Comparisons the index leads with: skill group A against group B on the same cases, and this run
against a baseline (an earlier results JSON).

Groups are compared within a run (``Run.run_name``: one model or policy over the case library): with a
reference and a flawed run of the same cases in one report, A of one run is never paired with B of the
other. Which cases ran in both groups comes from ``tracekit.analyze.reliability.paired_groups``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tracekit.report.runs import RANK, Run, run_key, run_names, short_run_name, sort_runs
from tracekit.report.summary import Tally


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

    @property
    def pass_rate_delta(self) -> float | None:
        """B's pass rate minus A's, in percentage points."""
        if self.a.tally.pass_rate is None or self.b.tally.pass_rate is None:
            return None
        return 100 * (self.b.tally.pass_rate - self.a.tally.pass_rate)

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


def compare_groups(runs: Iterable[Run]) -> GroupComparison | None:
    """Compare the first two groups (by name; normally A and B) on the cases both ran in the same run;
    None when there are fewer than two groups or no case in common."""
    from tracekit.analyze.reliability import paired_groups

    bound = [run for run in runs if run.case_id is not None and run.group]
    groups = sorted({run.group for run in bound if run.group})
    if len(groups) < 2:
        return None
    a_name, b_name = groups[0], groups[1]
    by_task: dict[tuple[str | None, str, str], list[Run]] = {}
    for run in bound:
        if run.group in (a_name, b_name):
            assert run.case_id is not None
            group = "A" if run.group == a_name else "B"  # paired_groups pairs groups named A and B
            by_task.setdefault((run.run_name, run.case_id, group), []).append(run)
    trials = [{"run": key[0], "case_id": key[1], "group": key[2], "verdict": run.result}
              for key, members in by_task.items() for run in members]  # fmt: skip
    shared = sorted(((pair["run"], pair["case_id"]) for pair in paired_groups(trials)),
                    key=lambda task: (task[1], task[0] or ""))  # fmt: skip
    if not shared:
        return None
    a_runs = [run for run_name, case in shared for run in by_task[(run_name, case, "A")]]
    b_runs = [run for run_name, case in shared for run in by_task[(run_name, case, "B")]]
    dimensions = sorted({run.dimension or "?" for run in a_runs + b_runs})
    rows = [
        GroupDelta(
            dimension,
            _group_stats(dimension, [r for r in a_runs if (r.dimension or "?") == dimension]),
            _group_stats(dimension, [r for r in b_runs if (r.dimension or "?") == dimension]),
        )
        for dimension in dimensions
    ]
    changed = []
    for run_name, case in shared:
        a_case, b_case = by_task[(run_name, case, "A")], by_task[(run_name, case, "B")]
        a_score, b_score = _score(a_case), _score(b_case)
        if a_score is not None and b_score is not None and a_score != b_score:
            changed.append(CaseChange(case, sort_runs(a_case), sort_runs(b_case), a_score, b_score, run_name))
    changed.sort(key=lambda change: (change.better, -abs(change.b_score - change.a_score), change.case_id,
                                     change.run_name or ""))  # fmt: skip
    names = run_names(a_runs + b_runs)
    per_run = [
        GroupDelta(
            short_run_name(name),
            _group_stats(short_run_name(name), [r for r in a_runs if r.run_name == name]),
            _group_stats(short_run_name(name), [r for r in b_runs if r.run_name == name]),
        )
        for name in names
    ] if len(names) > 1 else []  # fmt: skip
    return GroupComparison(
        a_name=a_name,
        b_name=b_name,
        overall=GroupDelta("all", _group_stats("all", a_runs), _group_stats("all", b_runs)),
        dimensions=rows,
        changed=changed,
        shared_cases=len(shared),
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
    """This run against an earlier one, matched by case × group × repeat (or trace id)."""

    regressions: list[BaselineChange]
    improvements: list[BaselineChange]
    new: list[Run]
    """Runs with no counterpart in the baseline."""
    missing: list[Run]
    """Baseline runs with no counterpart now."""
    unchanged: int


def diff_baseline(runs: Iterable[Run], baseline: Iterable[Run]) -> BaselineDiff:
    """Regressions (a worse verdict than before) and improvements, worst first. Traces are matched by run,
    case, group and repeat; by case, group and repeat alone when one side's results name no run."""
    runs, baseline = list(runs), list(baseline)
    with_run = any(run.run_name for run in runs) and any(run.run_name for run in baseline)
    current = _keyed(runs, with_run)
    before = _keyed(baseline, with_run)
    regressions: list[BaselineChange] = []
    improvements: list[BaselineChange] = []
    new: list[Run] = []
    unchanged = 0
    for key, run in current.items():
        old = before.get(key)
        if old is None:
            new.append(run)
            continue
        if run.result in RANK and old.result in RANK and run.result != old.result:
            change = BaselineChange(run, old)
            (regressions if change.regression else improvements).append(change)
        else:
            unchanged += 1
    missing = [run for key, run in before.items() if key not in current]

    def order(change: BaselineChange) -> tuple[int, str, int]:
        drop = RANK.get(change.before.result or "", 0) - RANK.get(change.run.result or "", 0)
        return (-abs(drop), change.run.label, change.run.position)

    return BaselineDiff(
        regressions=sorted(regressions, key=order),
        improvements=sorted(improvements, key=order),
        new=sort_runs(new),
        missing=sort_runs(missing),
        unchanged=unchanged,
    )


def _keyed(runs: Iterable[Run], with_run: bool) -> dict[tuple[str, ...], Run]:
    keyed: dict[tuple[str, ...], Run] = {}
    seen: dict[tuple[str, str, str, str], int] = {}
    for run in runs:
        key = run_key(run, with_run)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        keyed[(*key, str(occurrence))] = run
    return keyed


def _group_stats(label: str, runs: list[Run]) -> GroupStats:
    tally = Tally(label)
    for run in runs:
        tally.add(run.result)
    count = len(runs)
    return GroupStats(
        tally=tally,
        tokens=sum(run.tokens for run in runs) / count if count else None,
        tool_calls=sum(int(run.stats.get("tool_calls") or 0) for run in runs) / count if count else None,
    )


def _score(runs: list[Run]) -> float | None:
    """Mean verdict rank of the judged runs (pass 1, acceptable 0.5, fail 0)."""
    ranks = [RANK[run.result] / 2 for run in runs if run.result in RANK]
    return sum(ranks) / len(ranks) if ranks else None


def _difference(b: float | None, a: float | None) -> float | None:
    return None if a is None or b is None else b - a
