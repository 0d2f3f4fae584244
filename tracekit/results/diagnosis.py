"""The ``diagnosis`` of a failed trace in the analyze JSON: where it went wrong first, and why.

``traces[].diagnosis`` (left out when None: a trace that did not fail, or one analyzed before diagnoses
existed, writes the same bytes as before). Made by ``tracekit.diagnose.critical.diagnose``, which reads the
taxonomy (``Category``) from here; the rule that picks the critical step is documented there and in
``docs/diagnosis.md``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tracekit.results.base import ResultModel, omit_if_empty, omit_if_none

Category = Literal[
    "Instruction/Plan Adherence Failure",
    "Invention of New Information",
    "Invalid Invocation",
    "Misinterpretation of Tool Output",
    "Intent-Plan Misalignment",
    "Underspecified User Intent",
    "Intent Not Supported",
    "Guardrails Triggered",
    "System Failure",
    "Inconclusive",
]
"""AgentRx's failure taxonomy (arXiv 2602.02475, section 3), in its order."""

CATEGORIES: tuple[str, ...] = Category.__args__  # type: ignore[attr-defined]


class EvidenceStep(ResultModel):
    """One link of the evidence chain: an invariant broken (or a finding) at one step."""

    rule: str = Field(description="The invariant or finding: schema:required, policy:confirmation, retry_storm, ...")
    step: int | None = Field(description="message_index where it happened (null: the trace as a whole).")
    call: int | None = omit_if_none(description="The tool call's index, when a call broke it.")
    message: str = Field(description="What was broken, in a sentence.")
    depends_on: list[int] = omit_if_empty("Earlier steps (message indexes) its evidence rests on.")


class DiagnosisJudgement(ResultModel):
    """The judge's critical step over the evidence (``--diagnose-model``), beside the rule-based one."""

    status: Literal["judged", "pending", "error"] = Field(
        description="judged; pending (offline and not kept); error (no answer, or an answer naming a step that "
        "does not exist or a category outside the taxonomy: never a silent pass)."
    )
    model: str = Field(description="The judge model.")
    template: str = Field(description="The prompt template version (part of the kept verdict's identity).")
    request_key: str | None = omit_if_none(description="The canonical request key it is kept under.")
    source: Literal["kept", "new", "none"] = Field(description="Where the answer came from.")
    step: int | None = omit_if_none(description="message_index of the judge's critical step.")
    call: int | None = omit_if_none(description="The tool call at that step the judge named, if any.")
    category: Category | None = omit_if_none(description="The judge's AgentRx category.")
    reason: str = Field(default="", description="The judge's reason, or why there is no judgement.")
    same_step: bool | None = omit_if_none(description="The judge's step equals the rule-based one.")
    within_one_step: bool | None = omit_if_none(description="The two steps differ by at most one message.")
    same_category: bool | None = omit_if_none(description="The judge's category equals the rule-based one.")


class Diagnosis(ResultModel):
    """Where a failed trace went wrong first: the critical step, its AgentRx category, the evidence."""

    step: int | None = Field(description="message_index of the critical step (null: no evidence names one).")
    call: int | None = Field(default=None, description="Index of the tool call at the critical step, if a call.")
    category: Category = Field(
        description="AgentRx failure category (Barke et al. 2026, arXiv 2602.02475); Inconclusive when no "
        "evidence names a step."
    )
    rule: str | None = Field(default=None, description="The invariant or finding that decided it.")
    evidence: list[EvidenceStep] = Field(
        default_factory=list,
        description="The evidence chain: the critical violation first, then the earlier steps it rests on.",
    )
    recovered: bool = Field(
        default=False,
        description="Whether later steps repaired it (true only when every violation was repaired; the "
        "critical step is then the earliest one).",
    )
    failed_because: list[str] = Field(
        default_factory=list, description="Why the trace counts as failed: verdict, reward, violations."
    )
    violations: int = Field(default=0, description="Violations and findings considered.")
    judge: DiagnosisJudgement | None = omit_if_none(
        description="The judge's reading of the same evidence (``--diagnose-model``); left out without one."
    )

    @property
    def headline(self) -> str:
        """``went wrong at step N: category: evidence`` (the report's first line for the trace)."""
        where = f"step {self.step}" if self.step is not None else "no single step"
        message = self.evidence[0].message if self.evidence else "no invariant or finding names a step"
        return f"went wrong at {where}: {self.category}: {message}"
