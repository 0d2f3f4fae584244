"""The Check: one machine or judged check of a case against a trace, with its result and evidence.

A check's result is ``pass``, ``acceptable`` or ``fail``; ``pending`` when only the judge can settle it
(a recovery by explanation); ``error`` when the judge's answer could not be used (never a pass: it leaves
the verdict undecided, like ``pending``); ``untested`` (recovery expected but no failure happened) and
``info`` (a note, e.g. parallel calls) never decide the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

CheckResult = Literal["pass", "acceptable", "fail", "pending", "error", "untested", "info"]

#: Results that decide a verdict, worst last.
GRADES: tuple[CheckResult, ...] = ("pass", "acceptable", "fail")
#: Results that leave a verdict undecided (``pending``) unless another check fails.
UNDECIDED: tuple[CheckResult, ...] = ("pending", "error")


@dataclass
class Check:
    """One check of a case against a trace."""

    name: str
    """What was checked: ``calls[0]:search_flights``, ``forbidden_tools``, ``call_count``, ..."""
    result: CheckResult
    evidence: str
    """What was seen, in a sentence."""
    calls: list[int] = field(default_factory=list)
    """Trace indexes of the calls the evidence refers to."""
    expected: Any = None
    actual: Any = None
    failure_kind: str | None = None
    """For judged checks: the seed 004 failure kind the judge saw (loop, deadlock, ...), if any."""
    failure_condition: str | None = None
    """For judged checks: the attribution condition (a row of ``attribution.CAUSES``), if known."""

    def to_dict(self) -> dict[str, Any]:
        """The check as listed in ``verdict.checks``."""
        value: dict[str, Any] = {"check": self.name, "result": self.result, "evidence": self.evidence}
        if self.calls:
            value["calls"] = self.calls
        if self.expected is not None:
            value["expected"] = self.expected
        if self.actual is not None:
            value["actual"] = self.actual
        if self.failure_kind is not None:
            value["failure_kind"] = self.failure_kind
        return value
