"""What the index shows of the summary: verdict tallies (overall, by dimension and category, by run, and by
dimension and category within each run) and pass^k, read from the analyze JSON's ``summary`` (computed once,
by ``tracekit.analyze.summary``; nothing here counts a verdict or divides one count by another); plus the
traces grouped by finding kind and failure mode, for the pages that list them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tracekit.report.run_order import sort_runs
from tracekit.report.runs import RESULTS, Run, short_run_name
from tracekit.results.summary import ResultsSummary, VerdictCounts


@dataclass
class Tally:
    """Verdict counts of a set of runs, and their pass rate, as the summary gives them."""

    label: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RESULTS, 0))
    pass_rate: float | None = None
    """Share of decided verdicts that pass (None when none is decided): the rate the JSON writes where it
    writes one (a run's, a group's), else ``VerdictCounts.pass_rate``, analyze's one definition of it."""

    @classmethod
    def of(cls, label: str, counts: VerdictCounts) -> Tally:
        """The tally of counts the summary gives, where the JSON writes no rate for them."""
        return cls.written(label, counts, counts.pass_rate)

    @classmethod
    def written(cls, label: str, counts: VerdictCounts, pass_rate: float | None) -> Tally:
        """The tally of counts the summary gives with the pass rate it writes beside them."""
        return cls(label, {result: counts.count(result) for result in RESULTS}, pass_rate)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def judged(self) -> int:
        """Runs with a verdict other than pending."""
        return self.total - self.counts["pending"]

    def share(self, result: str) -> float:
        """Share of all counted runs with this result (0 when empty), for bar widths."""
        return self.counts[result] / self.total if self.total else 0.0


@dataclass
class DimensionRow:
    """A dimension's tally with one tally per category; with several runs, each run's own tallies too (runs are
    never pooled in a bar: a reference and a flawed run added together would show 50% everywhere)."""

    tally: Tally
    categories: list[Tally]
    per_run: dict[str, list[Tally]] = field(default_factory=dict)
    """Category label ("" for the dimension itself) -> one tally per run (labelled with its short name)."""


def overall_tally(summary: ResultsSummary | None, label: str = "all") -> Tally:
    """Verdict counts of every trace bound to a case."""
    return Tally.of(label, summary.verdicts) if summary is not None else Tally(label)


def tally_by_dimension(summary: ResultsSummary | None, *, per_run: bool = False) -> list[DimensionRow]:
    """Verdict counts per dimension and, within it, per category (sorted by name). The summary names a
    category ``<dimension>-<category>`` (``B2-PC``), or by its dimension alone (``TT``). With ``per_run`` and
    several runs in the summary, each row also gets one tally per run (``DimensionRow.per_run``), from each
    run's ``by_dimension`` and ``by_category``, in the summary's order of runs."""
    if summary is None:
        return []
    several = per_run and len(summary.runs) > 1
    rows = []
    for dimension, counts in summary.by_dimension.items():
        keys = _category_keys(dimension, summary.by_category)
        categories = [Tally.of(label, summary.by_category[key]) for key, label in keys.items()]
        found: dict[str, list[Tally]] = {}
        if several:
            found[""] = [Tally.of(_run_label(run.run), run.by_dimension[dimension])
                         for run in summary.runs if dimension in run.by_dimension]  # fmt: skip
            for key, label in keys.items():
                found[label] = [Tally.of(_run_label(run.run), run.by_category[key])
                                for run in summary.runs if key in run.by_category]  # fmt: skip
        rows.append(DimensionRow(Tally.of(dimension, counts), categories, found))
    return rows


def _category_keys(dimension: str, by_category: dict[str, VerdictCounts]) -> dict[str, str]:
    """The summary's category keys within a dimension -> the label a row shows (``B2-PC`` -> ``PC``)."""
    prefix = f"{dimension}-"
    return {key: key.removeprefix(prefix) for key in by_category if key == dimension or key.startswith(prefix)}


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


def outcomes_by_value(runs: Iterable[Run]) -> list[KindGroup]:
    """Imported traces grouped by their importer's own outcome (``reward 1.0``, ``reward 0.0``), most frequent
    first: the report's filter on an outcome (one list page per value)."""
    return _group_by_kind(runs, lambda run: [run.outcome] if run.outcome else [], with_severity=False)


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


def pass_hat_k(summary: ResultsSummary | None) -> list[PassK]:
    """pass^k for k = 1 .. the largest number of decided repeats of any task, overall, per skill group and
    (with several runs) per run, as the summary gives them (``tracekit.analyze.reliability``: a repeat
    succeeds with pass or acceptable; C(c, k) / C(n, k) per task, averaged over the tasks with n >= k)."""
    reliability = summary.reliability if summary is not None else None
    if summary is None or reliability is None or not reliability.ks:
        return []
    by_run = {_run_label(run.run): run.mean_pass_k for run in summary.runs} if len(summary.runs) > 1 else {}
    return [
        PassK(
            k=k,
            overall=reliability.mean_pass_k.get(str(k)),
            tasks=reliability.tasks.get(str(k), 0),
            by_group={group: means.get(str(k)) for group, means in reliability.by_group.items()},
            by_run={name: means.get(str(k)) for name, means in by_run.items()},
        )
        for k in reliability.ks
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


def tally_by_run(summary: ResultsSummary | None, pass_k: Iterable[PassK] = (), comparison: Any = None) -> list[RunRow]:
    """One row per run of the traces bound to cases (empty when there is a single run): verdict counts,
    pass^k at each k and, from ``comparison`` (``compare.GroupComparison``), the A vs B row of the run."""
    if summary is None or len(summary.runs) < 2:
        return []
    ks = [row.k for row in pass_k]
    deltas = {delta.label: delta for delta in getattr(comparison, "runs", None) or []}
    rows = []
    for run in summary.runs:
        label = _run_label(run.run)
        tally = Tally.written(label, run.verdicts, run.pass_rate)
        rows.append(RunRow(label, tally, {k: run.mean_pass_k.get(str(k)) for k in ks}, deltas.get(label)))
    return rows


def _run_label(name: str | None) -> str:
    return short_run_name(name)
