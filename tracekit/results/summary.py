"""The ``summary`` of the analyze JSON as typed models: totals and the statistics, computed once.

``tracekit.analyze.summary`` computes every figure here; the reports, the pytest plugin and other tools
only read them. What counts as a pass is documented in ``tracekit.analyze.reliability``: pass^k counts
pass or acceptable, Group A vs B counts pass only.

A *task* is a case in one skill group of one *run* (``run``: what made the traces, from their header, e.g.
``run:reference-agent/model-x``): its traces with different ``repeat`` are its repeats, and two runs of a case
library are never pooled.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tracekit.results.base import Number, ResultModel, omit_if_none

RESULTS = ("pass", "acceptable", "fail", "pending")
"""Verdict results in the order every count and report shows them."""


class VerdictCounts(ResultModel):
    """Traces per verdict result."""

    pass_: int = Field(0, alias="pass", description="Verdicts pass.")
    acceptable: int = Field(0, description="Verdicts acceptable.")
    fail: int = Field(0, description="Verdicts fail.")
    pending: int = Field(0, description="Verdicts pending (the case needs the judge; no verdict is kept).")

    def count(self, result: str) -> int:
        """The count of one result (``pass``, ``acceptable``, ``fail`` or ``pending``)."""
        return int(getattr(self, "pass_" if result == "pass" else result))

    @property
    def total(self) -> int:
        """All verdicts."""
        return self.pass_ + self.acceptable + self.fail + self.pending

    @property
    def decided(self) -> int:
        """Verdicts other than pending."""
        return self.total - self.pending

    @property
    def pass_rate(self) -> float | None:
        """pass / decided verdicts, unrounded (None when none is decided): the one definition of a pass rate.
        The JSON's ``pass_rate`` fields are it as ``written_rate`` rounds it; the reports show those, and this
        where the JSON writes no rate (overall, by dimension, by category). Not a key of the JSON."""
        return self.pass_ / self.decided if self.decided else None


def written_rate(rate: float | None) -> float | None:
    """A rate as the JSON writes it: rounded to 3 decimals (None stays None)."""
    return round(rate, 3) if rate is not None else None


class C4Rate(ResultModel):
    """One of seed 004's section rates over C4 traces with a decided verdict."""

    name: str = Field(description="The seed's name: 循环检测率, 死锁恢复率, 过早放弃率 or 放弃合理性.")
    rate: float | None = Field(description="The rate (null: no decided verdict).")
    traces: int = Field(description="Traces with a decided verdict.")
    pending: int = Field(description="Traces left out as pending.")
    lower_is_better: bool = Field(description="True for 过早放弃率.")


class TaskRef(ResultModel):
    """A task, named."""

    case_id: str = Field(description="The case.")
    group: str | None = Field(description="The skill group, if any.")
    run: str | None = Field(description="The run, if the traces name one.")


class TaskReliability(TaskRef):
    """The repeats of one task: how many were decided and passed, pass^k, whether it is flaky."""

    trials: int = Field(description="n: repeats with a decided verdict.")
    passes: int = Field(description="c: repeats that passed (pass or acceptable).")
    pending: int = Field(description="Repeats left out as pending.")
    pass_k: dict[str, float | None] = Field(alias="pass^k", description="C(c, k) / C(n, k) by k (null: n < k).")
    flaky: bool = Field(description="Some repeats pass and some fail.")


class Reliability(ResultModel):
    """pass^k over repeats (tau-bench, Yao et al. 2024): the chance that k repeats of a task all pass."""

    ks: list[int] = Field(description="k from 1 to the most decided repeats of any task.")
    cases: list[TaskReliability] = Field(description="Every task, in first-seen order.")
    mean_pass_k: dict[str, float | None] = Field(
        alias="mean_pass^k", description="Mean pass^k by k over the tasks with at least k decided repeats."
    )
    tasks: dict[str, int] = Field(description="How many tasks have at least k decided repeats, by k.")
    flaky: list[TaskRef] = Field(description="Tasks whose repeats disagree.")
    by_group: dict[str, dict[str, float | None]] = Field(
        default_factory=dict, description="Mean pass^k by k over each skill group's tasks, by group."
    )


class GroupFigures(ResultModel):
    """One group's traces in an A/B comparison (over the cases both groups ran)."""

    traces: int = Field(description="Traces of the group.")
    pending: int = Field(description="Of them, pending.")
    pass_rate: float | None = Field(description="pass / decided verdicts (null: none decided).")
    pass_or_acceptable_rate: float | None = Field(description="(pass + acceptable) / decided verdicts.")
    results: VerdictCounts = Field(description="The group's traces per verdict result.")
    mean_tool_use_total: float = Field(description="Mean seed 003 tool-use total.")
    mean_steps: float = Field(description="Mean judged tool calls (seed 001 steps).")
    mean_output_tokens: float = Field(description="Mean answer tokens (seed 001).")
    mean_tokens: float | None = Field(default=None, description="Mean input + output tokens per trace.")
    mean_tool_calls: float | None = Field(default=None, description="Mean tool calls per trace (history included).")


class GroupPair(ResultModel):
    """Group A beside group B, and B's pass rate minus A's."""

    A: GroupFigures = Field(description="Group A (skill disabled, in the seeds).")
    B: GroupFigures = Field(description="Group B (skill enabled).")
    pass_rate_delta: Number = Field(description="B's pass rate minus A's (a rate of null counts as 0).")


class CasePair(ResultModel):
    """One case (of one run) that both groups ran, and which group did better."""

    case_id: str = Field(description="The case.")
    run: str | None = Field(description="The run both groups' traces belong to.")
    A: GroupFigures = Field(description="Group A's traces of the case.")
    B: GroupFigures = Field(description="Group B's traces of the case.")
    pass_rate_delta: Number = Field(description="B's pass rate minus A's (a rate of null counts as 0).")
    better: Literal["A", "B", "tie", "undecided"] = Field(
        description="The group with the higher pass rate (pass only); undecided when a group has no decided verdict."
    )


class CasesBetter(ResultModel):
    """How many cases each group did better on."""

    A: int = Field(description="Cases where group A's pass rate is higher.")
    B: int = Field(description="Cases where group B's pass rate is higher.")
    tie: int = Field(description="Cases with equal pass rates.")
    undecided: int = Field(description="Cases where a group has no decided verdict.")


class ABComparison(ResultModel):
    """Group A vs Group B on the cases both ran, paired within each run (repeats averaged per case).

    A group counts a trace as a pass only when its verdict is ``pass`` (``tracekit.analyze.reliability``)."""

    cases: int = Field(description="(run, case) pairs that ran in both groups.")
    A: GroupFigures = Field(description="Group A over those cases.")
    B: GroupFigures = Field(description="Group B over those cases.")
    pass_rate_delta: Number = Field(description="B's pass rate minus A's.")
    cases_better: CasesBetter = Field(description="Cases each group did better on.")
    per_case: dict[str, CasePair] = Field(
        description="By case id, or '<case id>@<run>' when several runs have pairs."
    )
    by_dimension: dict[str, GroupPair] = Field(
        default_factory=dict, description="The same comparison within each dimension (B2, Q3, ...)."
    )


class RunSummary(ResultModel):
    """One run of the case library (one model or policy): its verdicts, pass^k and its own A/B comparison."""

    run: str | None = Field(description="The run's name (null: traces that name no run).")
    traces: int = Field(description="Traces of the run bound to a case.")
    verdicts: VerdictCounts = Field(description="Verdicts of the run.")
    by_dimension: dict[str, VerdictCounts] = Field(description="Verdicts of the run by dimension.")
    by_category: dict[str, VerdictCounts] = Field(
        default_factory=dict,
        description="Verdicts of the run by category, keyed as the summary's by_category (B2-PC, ...; TT for the "
        "traps); counted by the same code. Older results files lack it (read as empty).",
    )
    pass_rate: float | None = Field(description="pass / decided verdicts.")
    mean_pass_k: dict[str, float | None] = Field(alias="mean_pass^k", description="Mean pass^k of the run's tasks.")
    ab: ABComparison | None = Field(description="The run's Group A vs B comparison, or null.")


class DiagnosisAgreement(ResultModel):
    """The judge over the evidence (``--diagnose-model``) against the rule-based diagnosis, over the traces it
    judged: how often its critical step is the rule's, within one step of it, and of the same category."""

    judged: int = Field(description="Diagnosed traces the judge answered for (a valid answer).")
    pending: int = Field(description="Not judged: offline and no kept answer, or the model declined.")
    errors: int = Field(description="No answer, or an unusable one (a step or category that does not exist).")
    same_step: int = Field(description="Judged traces whose judge step equals the rule-based step.")
    within_one_step: int = Field(description="Judged traces whose two steps differ by at most one message.")
    same_category: int = Field(description="Judged traces whose two categories are equal.")


class ResultsSummary(ResultModel):
    """Totals over the analyzed traces and the statistics of their verdicts."""

    traces: int = Field(description="Traces analyzed (judge exchanges and unreadable files not counted).")
    bound_to_case: int = Field(description="Traces with a verdict.")
    tool_calls: int = Field(description="Tool calls over all traces.")
    tool_errors: int = Field(description="Tool errors over all traces.")
    llm_calls: int = Field(description="Model calls over all traces.")
    input_tokens: int = Field(description="Prompt tokens over all traces.")
    output_tokens: int = Field(description="Generated tokens over all traces.")
    unreadable_lines: int = Field(description="Problems reported in traces (unreadable lines, binding).")
    unreadable_files: int = Field(description="Files that could not be analyzed at all.")
    skipped_judge_exchanges: int = Field(0, description="The judge's kept exchanges found in a folder, skipped.")
    skipped_other_routes: int = Field(
        0, exclude_if=lambda count: count == 0,
        description="Files found in a folder that hold only exchanges of other routes (the recording proxy's "
        "*-other-routes.jsonl: no agent session), skipped; left out when none.",
    )
    verdicts: VerdictCounts = Field(description="Verdicts overall.")
    by_dimension: dict[str, VerdictCounts] = Field(description="Verdicts by dimension (B2, Q3, Q1, C4, TT).")
    by_category: dict[str, VerdictCounts] = Field(description="Verdicts by category: B2-PC, ...; TT for the traps.")
    findings: dict[str, int] = Field(description="Findings by kind.")
    failure_modes: dict[str, int] = Field(
        description="Failure modes by kind (seed 004: C4 cases only); unattributed: a failing C4 verdict none explains."
    )
    failure_families: dict[str, int] = Field(description="Failure modes by family: stuck, give_up, fabrication.")
    recovery_untested: int = Field(description="Traces whose recovery was untested (no failure happened).")
    c4_rates: dict[str, C4Rate] | None = Field(description="Seed 004's section rates (LD, DR, PA, AR), or null.")
    reliability: Reliability | None = Field(description="pass^k over repeats; null without verdicts.")
    runs: list[RunSummary] = Field(description="One row per run, by name (traces that name no run last).")
    ab: ABComparison | None = Field(description="Group A vs B over every run's pairs; null when no case ran in both.")
    diagnosis_judge: DiagnosisAgreement | None = omit_if_none(
        description="The judge over the evidence against the rule-based diagnosis (``--diagnose-model``); left "
        "out without it."
    )
