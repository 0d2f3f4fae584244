"""The ``summary`` of the analyze JSON (``tracekit.results.ResultsSummary``), gathered one trace at a time.

Each analyzed trace is reduced to a small ``Digest`` (in the worker process when ``--jobs`` > 1); the
summary keeps counters, plus one short row per trace bound to a case (for pass^k and the A/B comparison).
It holds:

- totals: traces, tool calls, tool errors, unreadable lines and files, the judge's kept exchanges skipped;
- verdict counts overall, per dimension (``B2``) and per category (``B2-PC``): pass / acceptable / fail /
  pending;
- findings by kind; failure modes by kind (``unattributed``: failing C4 verdicts no seed 004 mode explains; seed 004
  attributes C4 cases only) and by family (stuck / give_up / fabrication are reported side by side, never
  summed — seed 004);
  traces whose recovery was untested;
- seed 004's section rates for C4 (循环检测率, 死锁恢复率, 过早放弃率, 放弃合理性);
- ``reliability`` (null without verdicts): pass^k per task and its mean for k = 1 .. the most decided
  repeats of a task, overall and per skill group, and the flaky tasks (``tracekit.analyze.reliability``);
- ``runs``: one row per run: its traces, verdict counts (overall, per dimension and per category: the same
  ``Breakdown`` counts them as the summary's own), pass rate, mean pass^k and its own A/B comparison;
- ``ab``: Group A vs Group B (``tracekit.analyze.comparison``), or null when no case ran in both groups.

Every statistic of the reports comes from here; nothing downstream recomputes one.

``Summary`` is mergeable: engines that analyze traces in partitions (``--engine ray``) count each partition
in a ``Summary`` of its own and ``merge`` them in input order; counters add, the per-trace rows are
concatenated, so the built summary is the same whatever the partitioning::

    whole = Summary()
    for part in partitions:          # each a Summary counted where its traces were analyzed
        whole.merge(part)
    whole.build()
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from tracekit.analyze.comparison import Row, ab_comparison, trials
from tracekit.analyze.reliability import reliability_summary
from tracekit.results.summary import (
    RESULTS,
    C4Rate,
    DiagnosisAgreement,
    Reliability,
    ResultsSummary,
    RunSummary,
    VerdictCounts,
    written_rate,
)

if TYPE_CHECKING:
    from tracekit.results.model import TraceResult

Digest = dict[str, Any]
"""What the summary keeps of one trace (small and picklable: it travels back from worker processes)."""


def digest(entry: TraceResult) -> Digest:
    """What the summary needs of one ``traces[]`` entry."""
    stats = entry.stats
    small: Digest = {
        "stats": {"llm_calls": stats.llm_calls, "tool_calls": stats.tool_calls, "tool_errors": stats.tool_errors,
                  "input_tokens": stats.input_tokens, "output_tokens": stats.output_tokens},
        "findings": [finding.kind for finding in entry.findings],
        "problems": len(entry.problems),
        "run": entry.run,
        "group": entry.group,
        "repeat": entry.repeat,
        "verdict": None,
    }
    judgement = entry.diagnosis.judge if entry.diagnosis is not None else None
    if judgement is not None:
        small["diagnosis_judge"] = [judgement.status, bool(judgement.same_step), bool(judgement.within_one_step),
                                    bool(judgement.same_category)]  # fmt: skip
    verdict = entry.verdict
    if verdict is not None:
        scores = verdict.scores
        attribution = scores.attribution
        small["verdict"] = {
            "case_id": verdict.case.id,
            "dimension": verdict.case.dimension,
            "category": verdict.case.category,
            "result": verdict.result,
            "total": scores.tool_use.total,
            "recovery_state": scores.tool_use.recovery_state,
            "steps": scores.efficiency.steps,
            "tokens": scores.efficiency.output_tokens,
            "failure_kind": attribution.failure_kind if attribution else None,
            "family": attribution.family if attribution else None,
        }
    return small


class Counted(Protocol):
    """What ``Summary.add_outcome`` reads of one analyzed file (``results.FileOutcome``)."""

    error: str | None
    skipped: str | None
    small: Digest | None


def category_key(dimension: str, category: str) -> str:
    """A verdict's key in ``by_category``: ``<dimension>-<category>`` (``B2-PC``), the traps by ``TT`` alone."""
    return f"{dimension}-{category}" if dimension != "TT" else "TT"


class Breakdown:
    """Verdict counts overall, per dimension and per category: the summary's own and each run's, counted
    (and merged, and written) by this one code."""

    def __init__(self) -> None:
        self.verdicts: Counter[str] = Counter()
        self.by_dimension: dict[str, Counter[str]] = defaultdict(Counter)
        self.by_category: dict[str, Counter[str]] = defaultdict(Counter)

    def add(self, dimension: str, category: str, result: str) -> None:
        """Count one verdict of a case of ``dimension`` / ``category``."""
        self.verdicts[result] += 1
        self.by_dimension[dimension][result] += 1
        self.by_category[category_key(dimension, category)][result] += 1

    def merge(self, other: Breakdown) -> None:
        """Add ``other``'s counts to these."""
        self.verdicts.update(other.verdicts)
        for mine, theirs in ((self.by_dimension, other.by_dimension), (self.by_category, other.by_category)):
            for key, counts in theirs.items():
                mine[key].update(counts)

    def dimensions(self) -> dict[str, VerdictCounts]:
        """``by_dimension`` as the JSON writes it (sorted by dimension)."""
        return {key: counts_of(value) for key, value in sorted(self.by_dimension.items())}

    def categories(self) -> dict[str, VerdictCounts]:
        """``by_category`` as the JSON writes it (sorted by key)."""
        return {key: counts_of(value) for key, value in sorted(self.by_category.items())}


OTHER_ROUTES = "other routes"
"""``FileOutcome.skipped`` of a file found in a folder that holds only the exchanges of other routes (the
recording proxy's ``*-other-routes.jsonl``): no agent session, so no trace entry."""


class Summary:
    """Running totals over analyzed traces; ``merge`` adds another's (partitions counted apart)."""

    def __init__(self) -> None:
        self.traces = 0
        self.totals: Counter[str] = Counter()
        self.counted = Breakdown()
        """Verdicts of every trace bound to a case."""
        self.findings: Counter[str] = Counter()
        self.failure_modes: Counter[str] = Counter()
        self.failure_families: Counter[str] = Counter()
        self.recovery_untested = 0
        self.unreadable_files = 0
        self.skipped_judge_exchanges = 0
        self.skipped_other_routes = 0
        self.c4_primary: Counter[str] = Counter()
        self.diagnosis_judge: Counter[str] = Counter()
        """The judge over the evidence: traces by status, and its agreement with the rule-based diagnosis."""
        self.rows: list[Row] = []
        self.by_run: dict[str | None, Breakdown] = defaultdict(Breakdown)
        """Verdicts of each run's traces, by run name."""

    @property
    def verdicts(self) -> Counter[str]:
        """Verdicts overall."""
        return self.counted.verdicts

    @property
    def by_category(self) -> dict[str, Counter[str]]:
        """Verdicts by category key (``category_key``)."""
        return self.counted.by_category

    def add(self, small: Digest) -> None:
        """Count one trace (its ``digest``)."""
        self.traces += 1
        stats = small["stats"]
        for key in ("tool_calls", "tool_errors", "llm_calls", "input_tokens", "output_tokens"):
            self.totals[key] += stats.get(key, 0)
        self.totals["problems"] += small["problems"]
        self.findings.update(small["findings"])
        judged = small.get("diagnosis_judge")
        if judged is not None:
            status, *agreement = judged
            self.diagnosis_judge[status] += 1
            for name, agrees in zip(("same_step", "within_one_step", "same_category"), agreement, strict=True):
                self.diagnosis_judge[name] += int(agrees)
        verdict = small["verdict"]
        if verdict is None:
            return
        result = verdict["result"]
        self.counted.add(verdict["dimension"], verdict["category"], result)
        if result == "fail" and not verdict["failure_kind"] and verdict["dimension"] == "C4":
            self.failure_modes["unattributed"] += 1
        if verdict["failure_kind"]:
            self.failure_modes[verdict["failure_kind"]] += 1
            self.failure_families[verdict["family"]] += 1
            if verdict["dimension"] == "C4":
                self.c4_primary[f"{verdict['category']}:{verdict['failure_kind']}"] += 1
        if verdict["recovery_state"] == "untested":
            self.recovery_untested += 1
        run = small.get("run")
        self.by_run[run].add(verdict["dimension"], verdict["category"], result)
        self.rows.append(
            Row(run, verdict["case_id"], small["group"], small.get("repeat"), result, verdict["total"],
                verdict["steps"], verdict["tokens"], verdict["dimension"],
                stats.get("input_tokens", 0) + stats.get("output_tokens", 0), stats.get("tool_calls", 0))
        )  # fmt: skip

    def add_outcome(self, outcome: Counted) -> None:
        """Count one analyzed file: unreadable, a skipped judge exchange, or a trace (its digest)."""
        if outcome.error is not None:
            self.add_unreadable()
        elif outcome.skipped == OTHER_ROUTES:
            self.skipped_other_routes += 1
        elif outcome.skipped is not None:
            self.add_skipped_judge_exchange()
        elif outcome.small is not None:
            self.add(outcome.small)

    def merge(self, other: Summary) -> None:
        """Add ``other``'s counts to these, as if its traces had been added after these ones."""
        self.traces += other.traces
        self.totals.update(other.totals)
        self.counted.merge(other.counted)
        for run, counted in other.by_run.items():
            self.by_run[run].merge(counted)
        self.findings.update(other.findings)
        self.failure_modes.update(other.failure_modes)
        self.failure_families.update(other.failure_families)
        self.c4_primary.update(other.c4_primary)
        self.diagnosis_judge.update(other.diagnosis_judge)
        self.recovery_untested += other.recovery_untested
        self.unreadable_files += other.unreadable_files
        self.skipped_judge_exchanges += other.skipped_judge_exchanges
        self.skipped_other_routes += other.skipped_other_routes
        self.rows.extend(other.rows)

    def add_unreadable(self) -> None:
        """Count a file that could not be read at all."""
        self.unreadable_files += 1

    def add_skipped_judge_exchange(self) -> None:
        """Count a kept judge exchange found in a folder (a trace of the judge, not of an agent)."""
        self.skipped_judge_exchanges += 1

    def build(self) -> ResultsSummary:
        """The ``summary`` object."""
        return ResultsSummary(
            traces=self.traces,
            bound_to_case=sum(self.verdicts.values()),
            tool_calls=self.totals["tool_calls"],
            tool_errors=self.totals["tool_errors"],
            llm_calls=self.totals["llm_calls"],
            input_tokens=self.totals["input_tokens"],
            output_tokens=self.totals["output_tokens"],
            unreadable_lines=self.totals["problems"],
            unreadable_files=self.unreadable_files,
            skipped_judge_exchanges=self.skipped_judge_exchanges,
            skipped_other_routes=self.skipped_other_routes,
            verdicts=counts_of(self.verdicts),
            by_dimension=self.counted.dimensions(),
            by_category=self.counted.categories(),
            findings=dict(sorted(self.findings.items())),
            failure_modes=dict(sorted(self.failure_modes.items())),
            failure_families=dict(sorted(self.failure_families.items())),
            recovery_untested=self.recovery_untested,
            c4_rates=self._c4_rates(),
            reliability=reliability(self.rows, by_group=True) if self.rows else None,
            runs=self._runs() if self.rows else [],
            ab=ab_comparison(self.rows) if self.rows else None,
            diagnosis_judge=self._diagnosis_judge(),
        )

    def _diagnosis_judge(self) -> DiagnosisAgreement | None:
        counts = self.diagnosis_judge
        if not counts:
            return None
        return DiagnosisAgreement(judged=counts["judged"], pending=counts["pending"], errors=counts["error"],
                                  same_step=counts["same_step"], within_one_step=counts["within_one_step"],
                                  same_category=counts["same_category"])  # fmt: skip

    def _runs(self) -> list[RunSummary]:
        """One row per run (by name; traces that name no run last)."""
        rows_of: dict[str | None, list[Row]] = defaultdict(list)
        for row in self.rows:
            rows_of[row.run].append(row)
        entries = []
        for run in sorted(self.by_run, key=lambda name: (name is None, name or "")):
            counted = self.by_run[run]
            verdicts = counts_of(counted.verdicts)
            entries.append(RunSummary(
                run=run,
                traces=sum(counted.verdicts.values()),
                verdicts=verdicts,
                by_dimension=counted.dimensions(),
                by_category=counted.categories(),
                pass_rate=written_rate(verdicts.pass_rate),
                mean_pass_k=reliability(rows_of[run]).mean_pass_k,
                ab=ab_comparison(rows_of[run]),
            ))  # fmt: skip
        return entries

    def _c4_rates(self) -> dict[str, C4Rate] | None:
        """Seed 004's section rates over C4 traces with a decided verdict (pending left out, counted)."""
        rates: dict[str, C4Rate] = {}
        names = {"LD": "循环检测率", "DR": "死锁恢复率", "PA": "过早放弃率", "AR": "放弃合理性"}
        for category, name in names.items():
            counts = self.by_category.get(f"C4-{category}")
            if not counts:
                continue
            decided = sum(counts[result] for result in ("pass", "acceptable", "fail"))
            if category == "PA":
                hits = self.c4_primary[f"{category}:premature_abandonment"]
            elif category == "AR":
                hits = counts["pass"]
            else:
                hits = counts["pass"] + counts["acceptable"]
            rates[category] = C4Rate(
                name=name,
                rate=round(hits / decided, 3) if decided else None,
                traces=decided,
                pending=counts["pending"],
                lower_is_better=category == "PA",
            )
        return rates or None


def build_summary(entries: Iterable[TraceResult]) -> ResultsSummary:
    """The summary of analyzed traces (what ``write_results`` computes while it streams them)."""
    summary = Summary()
    for entry in entries:
        summary.add(digest(entry))
    return summary.build()


def reliability(rows: list[Row], by_group: bool = False) -> Reliability:
    """pass^k for k = 1 .. the most decided repeats of a task, and (``by_group``) its mean per skill group at
    the same ks."""
    overall = Reliability.model_validate(reliability_summary(trials(rows), ks=None))
    if by_group:
        groups = sorted({row.group for row in rows if row.group})
        overall.by_group = {
            group: reliability_summary(trials(row for row in rows if row.group == group), overall.ks)["mean_pass^k"]
            for group in groups
        }
    return overall


def counts_of(counts: Counter[str]) -> VerdictCounts:
    """Verdict counts as the model (every result present, in ``RESULTS`` order)."""
    return VerdictCounts.model_validate({result: counts[result] for result in RESULTS})
