"""The verdict of a trace bound to a case: checks, judged checks, result, scores, attribution.

Result, from the checks that decide (pass / acceptable / fail; ``untested`` and ``info`` never decide):

- ``fail`` when any check fails — a machine failure stands whatever a judge would say;
- ``pending`` when the case is scored by a judge (``scoring: judge`` or ``auto+judge``) and no judged
  verdict is available, when a machine check itself needs the judge (a recovery by explanation), or when
  the judge answered with an ``error`` (an error is never a pass);
- otherwise the worst of the checks: ``acceptable`` or ``pass``.

The judge plugs in through ``JudgeHook``: a function given the case run and the machine checks, returning
the judged checks (``Check`` with ``failure_kind`` when the judge names a failure mode; a ``pending``
check when it has no verdict), or None when it cannot judge at all. For cases that use the judge the
verdict also shows its two parts (``parts``: the machine checks' result and the judge's, as
``tracekit.analyze.combine.combined_verdict`` gives them) and where the judged part came from (``judge``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tracekit.analyze.attribution import attribute
from tracekit.analyze.check import GRADES, UNDECIDED, Check
from tracekit.analyze.checks import evaluate_expect
from tracekit.analyze.combine import combined_verdict
from tracekit.analyze.scoring import efficiency_score, tool_use_score
from tracekit.results.model import CaseRef, CheckEntry, JudgeDetails, Scores, Verdict, VerdictParts

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.analyze.detectors import Finding

JudgeHook = Callable[["CaseRun", list[Check]], "list[Check] | None"]
"""The judge's entry point: (case run, machine checks) -> judged checks, or None when it cannot judge."""

#: ``verdict.judge`` values: the case does not use the judge; the judged part came from the verdict store,
#: from a judge call in this run, or both (samples), or from a hook that does not say; no judged verdict
#: yet; the judge's answer was unusable.
JUDGE_STATES = ("not_needed", "kept", "new", "mixed", "judged", "pending", "error")


def judged_checks(run: CaseRun, checks: list[Check], judge: JudgeHook | None) -> list[Check] | None:
    """The judge's checks for a case that uses the judge (None: not needed, or no judge to ask)."""
    if not run.case.uses_judge or judge is None:
        return None
    return judge(run, checks)


def decide(checks: list[Check], needs_judge: bool, judged: list[Check] | None) -> str:
    """The verdict result of the machine checks and (when the case uses it) the judge's checks."""
    deciding = [*checks, *(judged or [])]
    grades = [check.result for check in deciding if check.result in GRADES]
    if "fail" in grades:
        return "fail"
    if (needs_judge and judged is None) or any(check.result in UNDECIDED for check in deciding):
        return "pending"
    if "acceptable" in grades:
        return "acceptable"
    return "pass"


def judge_state(needs_judge: bool, judged: list[Check] | None) -> str:
    """``verdict.judge``: where the judged part came from (``JUDGE_STATES``), read from the judged check."""
    if not needs_judge:
        return "not_needed"
    if not judged:
        return "pending"
    if any(check.result == "error" for check in judged):
        return "error"
    if not all(check.result in GRADES for check in judged):
        return "pending"
    source = _judge_details(judged[0]).get("source")
    return source if source in ("kept", "new", "mixed") else "judged"


def verdict_parts(checks: list[Check], judged: list[Check] | None, scoring: str) -> dict[str, Any]:
    """``verdict.parts`` of a case that uses the judge: the automatic part (the machine checks alone; None
    when a judge-only case has no deciding machine check), the judged part, and the judge model and template
    (``combined_verdict``; its result equals ``decide``'s)."""
    machine_decides = any(check.result in GRADES or check.result in UNDECIDED for check in checks)
    auto = decide(checks, False, None) if machine_decides or scoring != "judge" else None
    judged_dict = judged[0].to_dict() if judged else None
    parts: dict[str, Any] = combined_verdict(auto, judged_dict)["parts"]
    if judged_dict is None:
        parts["judge"] = "pending"
    return parts


def build_verdict(run: CaseRun, findings: list[Finding], judge: JudgeHook | None = None) -> Verdict:
    """``traces[].verdict`` of the analyze JSON for a trace bound to a case, as the results model: the checks
    built from the analysis's own ``Check`` objects, the scores and parts validated from what scoring and
    ``combined_verdict`` compute."""
    checks = evaluate_expect(run)
    if run.history_problem is not None:
        checks.insert(0, Check("history", "info", run.history_problem))
    uses_judge = run.case.uses_judge
    if not any(check.result in GRADES or check.result in UNDECIDED for check in checks) and not uses_judge:
        checks.append(Check("expect", "info", "the case has no machine checks"))
    judged = judged_checks(run, checks, judge)
    result = decide(checks, uses_judge, judged)
    all_checks = [*checks, *(judged or [])]
    scores: dict[str, Any] = {"tool_use": tool_use_score(run), "efficiency": efficiency_score(run)}
    attribution = attribute(run, result, all_checks, findings)
    if attribution is not None:
        scores["attribution"] = attribution
    case = run.case
    return Verdict.built(
        result=result,
        case=CaseRef.built(id=case.id, dimension=case.dimension, category=case.category, scoring=case.scoring),
        dimension=case.dimension,
        category=case.category,
        failure_modes=[attribution["failure_kind"]] if attribution is not None else [],
        history_messages=run.history_messages,
        checks=[check_entry(check) for check in checks],
        judged_checks=[check_entry(check) for check in judged] if judged is not None else None,
        judge=judge_state(uses_judge, judged),
        scores=Scores.model_validate(scores),
        parts=VerdictParts.model_validate(verdict_parts(checks, judged, case.scoring)) if uses_judge else None,
    )


def check_entry(check: Check) -> CheckEntry:
    """A check as its ``verdict.checks`` entry (a judged check with its ``judge`` details)."""
    details = getattr(check, "judge", None)
    return CheckEntry.built(
        check=check.name, result=check.result, evidence=check.evidence, calls=check.calls,
        expected=check.expected, actual=check.actual, failure_kind=check.failure_kind,
        judge=JudgeDetails.model_validate(details) if isinstance(details, dict) else None,
    )  # fmt: skip


def _judge_details(check: Check) -> dict[str, Any]:
    details = getattr(check, "judge", None)
    return details if isinstance(details, dict) else {}
