"""A violation: one invariant a trace broke, at one step, with the evidence and the AgentRx category.

The categories are the ten of AgentRx's failure taxonomy (Barke et al., 2026, "AgentRx", arXiv 2602.02475):
the critical step of a failed trajectory is named with one of them. Every invariant of this package says
which category its violation belongs to (``tracekit.diagnose.critical`` picks the critical one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracekit.results.diagnosis import CATEGORIES, Category

__all__ = ["CATEGORIES", "Category", "Violation"]

ADHERENCE: Category = "Instruction/Plan Adherence Failure"
INVENTION: Category = "Invention of New Information"
INVALID: Category = "Invalid Invocation"
MISREAD: Category = "Misinterpretation of Tool Output"
MISALIGNED: Category = "Intent-Plan Misalignment"
NOT_SUPPORTED: Category = "Intent Not Supported"
GUARDRAILS: Category = "Guardrails Triggered"
SYSTEM: Category = "System Failure"
INCONCLUSIVE: Category = "Inconclusive"


@dataclass(frozen=True)
class Violation:
    """An invariant broken at one step of a trace.

    ``kind`` is the finding kind it is reported as (``schema_violation``, ``policy_violation``,
    ``error_talked_past``, ``open_task``, ``reference_mismatch``); ``rule`` the invariant (``schema:required``,
    ``policy:confirmation``, ...); ``step`` the ``message_index`` where it happened and ``call`` the tool
    call's ``index`` when a call broke it; ``depends_on`` the earlier steps (message indexes) its evidence
    rests on (the result a precondition read, the message the user confirmed).
    """

    kind: str
    rule: str
    step: int
    call: int | None
    message: str
    category: Category
    depends_on: tuple[int, ...] = field(default=())

    def sort_key(self) -> tuple[int, int]:
        """Earliest step first; within a step, the earlier call (a step-level violation last)."""
        return (self.step, self.call if self.call is not None else 1 << 30)
