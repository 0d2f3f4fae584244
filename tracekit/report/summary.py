"""Counting traces for the index: verdicts by dimension and category and by run, findings and failure modes
by kind, and pass^k over repeats (computed by ``tracekit.analyze.reliability``, the one implementation)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracekit.report.runs import RESULTS, Run, run_names, short_run_name, sort_runs


@dataclass
class Tally:
    """Verdict counts of a set of runs."""

    label: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RESULTS, 0))

    def add(self, result: str | None) -> None:
        """Count one verdict (results outside the four known ones count as pending)."""
        if result is None:
            return
        self.counts[result if result in self.counts else "pending"] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def judged(self) -> int:
        """Runs with a verdict other than pending."""
        return self.total - self.counts["pending"]

    @property
    def pass_rate(self) -> float | None:
        """Share of judged runs that pass (None when nothing is judged)."""
        return self.counts["pass"] / self.judged if self.judged else None

    def share(self, result: str) -> float:
        """Share of all counted runs with this result (0 when empty), for bar widths."""
        return self.counts[result] / self.total if self.total else 0.0


@dataclass
class DimensionRow:
    """A dimension's tally with one tally per category."""

    tally: Tally
    categories: list[Tally]


def overall_tally(runs: Iterable[Run], label: str = "all") -> Tally:
    """Verdict counts of every run bound to a case."""
    tally = Tally(label)
    for run in runs:
        tally.add(run.result)
    return tally


def tally_by_dimension(runs: Iterable[Run]) -> list[DimensionRow]:
    """Verdict counts per dimension and, within it, per category (sorted by name)."""
    dimensions: dict[str, Tally] = {}
    categories: dict[tuple[str, str], Tally] = {}
    for run in runs:
        if run.result is None:
            continue
        dimension = run.dimension or "?"
        category = run.category or "?"
        dimensions.setdefault(dimension, Tally(dimension)).add(run.result)
        categories.setdefault((dimension, category), Tally(category)).add(run.result)
    return [
        DimensionRow(
            tally=dimensions[name],
            categories=[categories[key] for key in sorted(categories) if key[0] == name],
        )
        for name in sorted(dimensions)
    ]


@dataclass
class KindGroup:
    """Runs sharing a finding kind or failure mode."""

    kind: str
    count: int
    """Occurrences (a run with two findings of the kind counts twice)."""
    runs: list[Run]
    """Distinct runs, in report order."""
    severity: str | None = None
    """The worst severity seen (findings only)."""


_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def findings_by_kind(runs: Iterable[Run]) -> list[KindGroup]:
    """Findings grouped by kind, most frequent first."""
    return _group_by_kind(runs, lambda run: [finding.kind for finding in run.findings], with_severity=True)


def failure_modes_by_kind(runs: Iterable[Run]) -> list[KindGroup]:
    """Failure modes (the attribution of failing runs) grouped by kind, most frequent first."""
    return _group_by_kind(runs, lambda run: run.failure_modes, with_severity=False)


def _group_by_kind(
    runs: Iterable[Run], kinds_of: Callable[[Run], list[str]], *, with_severity: bool
) -> list[KindGroup]:
    counts: dict[str, int] = {}
    members: dict[str, list[Run]] = {}
    severities: dict[str, str] = {}
    for run in runs:
        kinds = kinds_of(run)
        for kind in kinds:
            counts[kind] = counts.get(kind, 0) + 1
            if not members.setdefault(kind, []) or members[kind][-1] is not run:
                members[kind].append(run)
        if with_severity:
            for finding in run.findings:
                known = severities.get(finding.kind)
                if known is None or _SEVERITY_ORDER.get(finding.severity, 3) < _SEVERITY_ORDER.get(known, 3):
                    severities[finding.kind] = finding.severity
    groups = [
        KindGroup(kind, counts[kind], sort_runs(members[kind]), severities.get(kind))
        for kind in counts
    ]
    return sorted(groups, key=lambda group: (-group.count, group.kind))


@dataclass
class PassK:
    """pass^k at one k: the chance that k independent repeats of a task all pass."""

    k: int
    overall: float | None
    tasks: int
    """Tasks (run × case × group) with at least k judged repeats."""
    by_group: dict[str, float | None]
    by_run: dict[str, float | None] = field(default_factory=dict)
    """pass^k of each run's tasks, by run name (``-``: traces naming no run), when there are several runs."""


#: Verdicts that count as a success for pass^k, as in ``tracekit run``'s summary (tracekit.runner).
PASSING = ("pass", "acceptable")


def pass_hat_k(runs: Iterable[Run], successes: tuple[str, ...] = PASSING) -> list[PassK]:
    """pass^k for k = 1 .. the largest number of judged repeats of any task.

    A task is a case in one group of one run: the reference and the flawed run of the same case are two
    tasks, never two repeats of one. For a task with n judged repeats of which c succeeded, the unbiased
    estimate of "k repeats all succeed" is C(c, k) / C(n, k); pass^k is its mean over the tasks with
    n >= k (the estimator of the tau-bench paper, Yao et al., 2024, section 5; computed by
    ``tracekit.analyze.reliability.reliability_summary``).
    """
    from tracekit.analyze.reliability import reliability_summary

    bound = [run for run in runs if run.case_id is not None and run.result is not None]
    trials = [_trial(run) for run in bound]
    overall = reliability_summary(trials, ks=None, passed=successes)
    ks = overall["ks"]
    if not ks:
        return []
    groups = sorted({str(trial["group"]) for trial in trials if trial["group"]})
    names = run_names(bound)
    by_group = {g: reliability_summary([t for t in trials if t["group"] == g], ks, successes) for g in groups}
    by_run = {}
    for name in names if len(names) > 1 else []:
        by_run[_run_label(name)] = reliability_summary([t for t in trials if t["run"] == name], ks, successes)
    return [
        PassK(
            k=k,
            overall=overall["mean_pass^k"][str(k)],
            tasks=overall["tasks"][str(k)],
            by_group={group: summary["mean_pass^k"][str(k)] for group, summary in by_group.items()},
            by_run={name: summary["mean_pass^k"][str(k)] for name, summary in by_run.items()},
        )
        for k in overall["ks"]
    ]


@dataclass
class RunRow:
    """One run of the results (a model or policy over the case library): its verdicts, pass^k and A vs B."""

    name: str
    """The run's name without ``run:`` (``-``: traces naming no run)."""
    tally: Tally
    pass_k: dict[int, float | None]
    ab: Any = None
    """Its Group A vs B row (``compare.GroupDelta``), when both groups ran the same cases."""


def tally_by_run(runs: Sequence[Run], pass_k: Sequence[PassK] = (), comparison: Any = None) -> list[RunRow]:
    """One row per run of the traces bound to cases (empty when there is a single run): verdict counts,
    pass^k at each k and, from ``comparison`` (``compare.GroupComparison``), the A vs B row of the run."""
    names = run_names(runs)
    if len(names) < 2:
        return []
    deltas = {delta.label: delta for delta in getattr(comparison, "runs", None) or []}
    rows = []
    for name in names:
        label = _run_label(name)
        tally = overall_tally([run for run in runs if run.case_id is not None and run.run_name == name], label)
        rows.append(RunRow(label, tally, {row.k: row.by_run.get(label) for row in pass_k}, deltas.get(label)))
    return rows


def _trial(run: Run) -> dict[str, Any]:
    return {"run": run.run_name, "case_id": run.case_id, "group": run.group or None, "repeat": run.repeat,
            "verdict": run.result}  # fmt: skip


def _run_label(name: str | None) -> str:
    return short_run_name(name)
