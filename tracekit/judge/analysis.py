"""The judge inside ``tracekit analyze``: a ``JudgeHook`` (tracekit.analyze.verdict) made from a JudgeConfig.

Analysis may run in worker processes, so what travels is the (picklable) ``JudgeConfig``; each process
makes its own ``CaseJudge`` on first use and keeps it for the rest of the run. Example::

    hook = judge_hook(JudgeConfig(model=None, offline=True))         # kept verdicts only, any model
    entry = analyze_trace(trace, settings, library=library, judge=hook)

The hook returns one check named ``judge`` whose dict carries a ``judge`` object (model, template version,
reasons, quotes, where the answer came from). A judge ``error`` is its own result, never a pass: analysis
leaves the case undecided (``pending``) and the check says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracekit.analyze.checks import Check
from tracekit.judge.judging import CHECK_NAME, CaseJudge, JudgeConfig, JudgedCheck, JudgePool

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun

AnalysisHook = Callable[["CaseRun", list[Check]], "list[Check] | None"]

_JUDGES = JudgePool(CaseJudge)


@dataclass
class JudgeCheck(Check):
    """An analysis check made by the judge: a ``Check`` whose dict also carries the ``judge`` details."""

    judge: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The check as listed in the verdict, with ``judge``: model, template, reasons, quotes, source."""
        value = super().to_dict()
        value["judge"] = self.judge
        return value


def judge_hook(config: JudgeConfig) -> AnalysisHook:
    """The analysis hook for ``config``: judges each case run that uses the judge (one CaseJudge per process)."""

    def hook(run: CaseRun, checks: list[Check]) -> list[Check] | None:
        judged = _JUDGES.get(config).judge(run.case, run.trace)
        return [as_analysis_check(judged)]

    return hook


def as_analysis_check(judged: JudgedCheck) -> JudgeCheck:
    """A judged check as an analysis ``Check`` (same result: pass, acceptable, fail, pending or error)."""
    data = judged.to_dict()
    speaker = judged.speaker
    return JudgeCheck(
        CHECK_NAME,
        judged.result,
        data["evidence"],
        failure_kind=speaker.failure_kind if speaker is not None and judged.result == "fail" else None,
        judge={**data["judge"], "status": judged.result},
    )


def close_judges() -> None:
    """Stop the judges this process made (their replaying proxies)."""
    _JUDGES.close()
