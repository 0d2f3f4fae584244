"""Case checks: every machine check of a case's ``expect``, each with its result and evidence.

One function per kind of expectation; ``evaluate_expect`` runs those the case uses, in a fixed order.
This module holds the checks on which calls were made (required and forbidden calls, asking the user);
``sequence_checks`` their order, data flow, repeats and parallel calls; ``call_matching`` how one call is
matched to an expected one; ``outcome_checks`` the counts, tiers, recovery and answer checks.
The ``Check`` model and its results are in ``check`` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from tracekit.analyze import counts, outcome_checks, sequence_checks
from tracekit.analyze.call_matching import call_matches, match_distinct
from tracekit.analyze.check import Check, CheckResult
from tracekit.analyze.extensions import run_case_checks

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.cases import Expect, ExpectedCall

#: How a ``forbidden_calls`` note marks a seed 003 parameter rule (cases/traps/SCORING.md).
PARAMETER_RULE_NOTE = "参数语义规则"

def evaluate_expect(run: CaseRun) -> list[Check]:
    """Every machine check the case's ``expect`` asks for, then its branches (``either``), the checks of its
    Pass line alone (``for_pass``: a failure there is ``acceptable``) and its advisory checks (NOT SEED
    TEXT: ``info``, never deciding)."""
    expect = run.case.expect
    checks = _evaluate(run)
    if expect.either:
        checks.append(_either(run))
    if expect.for_pass is not None:
        for check in _evaluate(_with_expect(run, expect.for_pass)):
            if check.result == "fail":
                check.result = "acceptable"
                check.evidence = f"the Pass line asks for it, the Fail line does not: {check.evidence}"
            check.name = f"for_pass:{check.name}"
            checks.append(check)
    if expect.advisory is not None:
        for check in _evaluate(_with_expect(run, expect.advisory)):
            if check.result in ("pass", "acceptable", "fail"):
                check.evidence = f"NOT SEED TEXT (advisory, never decides): {check.result}: {check.evidence}"
                check.result = "info"
            check.name = f"advisory:{check.name}"
            checks.append(check)
    return checks


def _evaluate(run: CaseRun) -> list[Check]:
    checks: list[Check] = []
    for evaluate in [*_CHECKS, *outcome_checks.CHECKS]:
        checks.extend(evaluate(run))
    checks.extend(run_case_checks(run))
    return checks


def _with_expect(run: CaseRun, expect: Expect) -> CaseRun:
    """The same run checked against other expectations (a branch, the for-pass or the advisory checks)."""
    case = run.case.model_copy(update={"expect": expect})
    return replace(run, case=case)


def _either(run: CaseRun) -> Check:
    """A Pass line "A 或 B": passes when the checks of one branch all pass (none fails or is undecided)."""
    held: list[str] = []
    shown: list[str] = []
    calls: list[int] = []
    undecided = False
    for branch in run.case.expect.either:
        results = _evaluate(_with_expect(run, branch.expect))
        deciding = [check for check in results if check.result in ("pass", "acceptable", "fail", "pending", "error")]
        bad = [check for check in deciding if check.result == "fail"]
        open_ = [check for check in deciding if check.result in ("pending", "error")]
        if not bad and not open_:
            held.append(branch.label)
            calls.extend(index for check in deciding for index in check.calls)
        undecided = undecided or (not bad and bool(open_))
        detail = "; ".join(f"{check.name} {check.result}: {check.evidence}" for check in (bad or open_ or deciding))
        shown.append(f"「{branch.label}」: {'holds' if not bad and not open_ else 'does not hold'} ({detail})")
    result: CheckResult = "pass" if held else "pending" if undecided else "fail"
    labels = [branch.label for branch in run.case.expect.either]
    return Check("either", result, " / ".join(shown), sorted(set(calls)), labels, held or None)


# --------------------------------------------------------------------------- required and forbidden calls


def _required_calls(run: CaseRun) -> Iterator[Check]:
    expected_calls = run.case.expect.calls
    outcomes_of = [
        [(node, *call_matches(run, expected, node)) for node in run.judged if node.tool in expected.tools]
        for expected in expected_calls
    ]
    # Each expected call takes a call of its own (agentevals' trajectory match does the same).
    chosen = match_distinct([[node.index for node, ok, _ in outcomes if ok] for outcomes in outcomes_of])
    for position, expected in enumerate(expected_calls):
        name = f"calls[{position}]:{'|'.join(expected.tools)}"
        outcomes = outcomes_of[position]
        if not outcomes:
            called = ", ".join(node.tool for node in run.judged) or "no tool"
            yield Check(name, "fail", f"{' or '.join(expected.tools)} was never called (called: {called})")
            continue
        good = next((outcome for outcome in outcomes if outcome[0].index == chosen[position]), None)
        if good is not None:
            node, _, reasons = good
            detail = f": {'; '.join(reasons)}" if reasons else ""
            yield Check(name, "pass", f"call #{node.index} {node.tool}{detail}", [node.index])
        elif any(ok for _, ok, _ in outcomes):
            taken = ", ".join(f"#{node.index}" for node, ok, _ in outcomes if ok)
            yield Check(
                name,
                "fail",
                f"the matching call(s) {taken} already satisfy another expected call; each expected call needs a "
                f"call of its own",
                [node.index for node, _, _ in outcomes],
            )
        else:
            node, _, reasons = outcomes[-1]
            yield Check(
                name,
                "fail",
                f"no {node.tool} call with the expected arguments; call #{node.index}: {'; '.join(reasons)}",
                [n.index for n, _, _ in outcomes],
                actual=node.arguments,
            )


def _forbidden_tools(run: CaseRun) -> Iterator[Check]:
    forbidden = run.case.expect.forbidden_tools
    if not forbidden:
        return
    used = [node for node in run.judged if node.tool in forbidden]
    if used:
        names = ", ".join(sorted({node.tool for node in used}))
        yield Check("forbidden_tools", "fail", f"called forbidden tool(s) {names}", [n.index for n in used], forbidden)
    else:
        yield Check("forbidden_tools", "pass", f"none of {', '.join(forbidden)} was called", expected=forbidden)


def _forbidden_calls(run: CaseRun) -> Iterator[Check]:
    for position, expected in enumerate(run.case.expect.forbidden_calls):
        name = f"forbidden_calls[{position}]:{'|'.join(expected.tools)}"
        hits = [node for node in run.judged if call_matches(run, expected, node)[0]]
        note = f" ({expected.note})" if expected.note else ""
        if hits:
            shown = "; ".join(f"#{node.index} {node.tool} {node.arguments}" for node in hits[:3])
            # A broken parameter rule of seed 003 costs parameter points and makes the verdict acceptable.
            result: CheckResult = "acceptable" if is_parameter_rule(expected) else "fail"
            yield Check(name, result, f"made a forbidden call{note}: {shown}", [node.index for node in hits])
        else:
            yield Check(name, "pass", f"no such call{note}")


def is_parameter_rule(rule: ExpectedCall) -> bool:
    """A ``forbidden_calls`` entry that encodes one of seed 003's parameter rules (its note says so)."""
    return (rule.note or "").startswith(PARAMETER_RULE_NOTE)


def _no_tool_call(run: CaseRun) -> Iterator[Check]:
    if run.case.expect.no_tool_call is not True:
        return
    if run.judged:
        names = ", ".join(node.tool for node in run.judged)
        yield Check(
            "no_tool_call",
            "fail",
            f"the answer needs no tool, but it called {names}",
            [node.index for node in run.judged],
        )
    else:
        yield Check("no_tool_call", "pass", "answered without calling a tool")


def _ask_user(run: CaseRun) -> Iterator[Check]:
    wanted = run.case.expect.ask_user
    if wanted is None:
        return
    asked = counts.questions(run.trace, run.history_messages)
    first_question = asked[0].message_index if asked else None
    calls_before = [node for node in run.judged if first_question is None or node.turn < first_question]
    if wanted:
        if asked and not calls_before:
            yield Check("ask_user", "pass", f"asked the user before calling any tool: {asked[0].text[:120]!r}")
        elif asked:
            yield Check(
                "ask_user",
                "fail",
                "called tools on assumed values before asking the user",
                [node.index for node in calls_before],
            )
        else:
            yield Check(
                "ask_user",
                "fail",
                "never asked the user for the missing information",
                [node.index for node in run.judged],
            )
    elif asked and not calls_before:
        yield Check(
            "ask_user",
            "fail",
            f"asked the user instead of calling a tool with what it already knew: {asked[0].text[:120]!r}",
        )
    else:
        yield Check("ask_user", "pass", "did not ask the user before acting")


_CHECKS: list[Callable[[CaseRun], Iterator[Check]]] = [
    _required_calls,
    _forbidden_tools,
    _forbidden_calls,
    _no_tool_call,
    _ask_user,
    sequence_checks.order_checks,
    sequence_checks.data_flow_checks,
    sequence_checks.repeated_call_checks,
    sequence_checks.parallel_checks,
]
