"""The verdict of a trace bound to a case: checks, judged checks, result, scores, attribution.

Result, from the checks that decide (pass / acceptable / fail; ``untested`` and ``info`` never decide):

- ``fail`` when any check fails — a machine failure stands whatever a judge would say;
- ``pending`` when the case is scored by a judge (``scoring: judge`` or ``auto+judge``) and no judged
  verdict is available, or when a machine check itself needs the judge (a recovery by explanation);
- otherwise the worst of the checks: ``acceptable`` or ``pass``.

The judge arrives in a later issue through ``JudgeHook``: a function given the case run and the machine
checks, returning the judged checks (``Check`` with ``failure_kind`` when the judge names a failure
mode), or None when it has no cached verdict. ``judged_checks`` is where it is called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tracekit.analyze.checks import GRADES, Check, evaluate_expect

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.analyze.detectors import Finding

JudgeHook = Callable[["CaseRun", list[Check]], "list[Check] | None"]
"""The judge's entry point: (case run, machine checks) -> judged checks, or None when not cached."""


def judged_checks(run: CaseRun, checks: list[Check], judge: JudgeHook | None) -> list[Check] | None:
    """The judge's checks for a case that uses the judge (None: not needed, or no cached verdict)."""
    if not run.case.uses_judge or judge is None:
        return None
    return judge(run, checks)


def decide(checks: list[Check], needs_judge: bool, judged: list[Check] | None) -> str:
    """The verdict result of the machine checks and (when the case uses it) the judge's checks."""
    deciding = [*checks, *(judged or [])]
    grades = [check.result for check in deciding if check.result in GRADES]
    if "fail" in grades:
        return "fail"
    if (needs_judge and judged is None) or any(check.result == "pending" for check in deciding):
        return "pending"
    if "acceptable" in grades:
        return "acceptable"
    return "pass"


def build_verdict(run: CaseRun, findings: list[Finding], judge: JudgeHook | None = None) -> dict[str, Any]:
    """``traces[].verdict`` of the analyze JSON for a trace bound to a case."""
    from tracekit.analyze.attribution import attribute
    from tracekit.analyze.scoring import efficiency_score, tool_use_score

    checks = evaluate_expect(run)
    if not any(check.result in GRADES or check.result == "pending" for check in checks) and not run.case.uses_judge:
        checks.append(Check("expect", "info", "the case has no machine checks"))
    judged = judged_checks(run, checks, judge)
    result = decide(checks, run.case.uses_judge, judged)
    all_checks = [*checks, *(judged or [])]
    scores: dict[str, Any] = {"tool_use": tool_use_score(run), "efficiency": efficiency_score(run)}
    attribution = attribute(run, result, all_checks, findings)
    if attribution is not None:
        scores["attribution"] = attribution
    judge_state = "not_needed"
    if run.case.uses_judge:
        decided = judged is not None and any(check.result in GRADES for check in judged)
        judge_state = "cached" if decided else "missing"
    return {
        "result": result,
        "case": {
            "id": run.case.id,
            "dimension": run.case.dimension,
            "category": run.case.category,
            "scoring": run.case.scoring,
        },
        "dimension": run.case.dimension,
        "category": run.case.category,
        "failure_modes": [attribution["failure_kind"]] if attribution is not None else [],
        "history_messages": run.history_messages,
        "checks": [check.to_dict() for check in checks],
        "judged_checks": [check.to_dict() for check in judged] if judged is not None else None,
        "judge": judge_state,
        "scores": scores,
    }
