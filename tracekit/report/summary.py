"""Counting runs for the index: verdicts by dimension and category, findings and failure modes by kind,
and pass^k over repeats."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from math import comb

from tracekit.report.runs import RESULTS, Run, sort_runs


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
    """Tasks (case × group) with at least k judged repeats."""
    by_group: dict[str, float | None]


#: Verdicts that count as a success for pass^k, as in ``tracekit run``'s summary (tracekit.runner).
PASSING = ("pass", "acceptable")


def pass_hat_k(runs: Iterable[Run], successes: tuple[str, ...] = PASSING) -> list[PassK]:
    """pass^k for k = 1 .. the largest number of judged repeats of any task.

    A task is a case in one group. For a task with n judged repeats of which c succeeded, the unbiased
    estimate of "k repeats all succeed" is C(c, k) / C(n, k); pass^k is its mean over the tasks with
    n >= k. This is the estimator of the tau-bench paper (Yao et al., 2024, "τ-bench", section 5).
    """
    tasks: dict[tuple[str, str], list[bool]] = {}
    for run in runs:
        if run.case_id is None or run.result in (None, "pending"):
            continue
        tasks.setdefault((run.case_id, run.group or ""), []).append(run.result in successes)
    if not tasks:
        return []
    groups = sorted({group for _, group in tasks if group})
    largest = max(len(outcomes) for outcomes in tasks.values())
    rows = []
    for k in range(1, largest + 1):
        overall, count = _mean_pass_k(tasks.values(), k)
        by_group = {
            group: _mean_pass_k([o for (_, g), o in tasks.items() if g == group], k)[0] for group in groups
        }
        rows.append(PassK(k=k, overall=overall, tasks=count, by_group=by_group))
    return rows


def _mean_pass_k(outcome_lists: Iterable[list[bool]], k: int) -> tuple[float | None, int]:
    values = [comb(sum(o), k) / comb(len(o), k) for o in outcome_lists if len(o) >= k]
    return (sum(values) / len(values) if values else None, len(values))
