"""Case checks: every machine check of a case's ``expect``, each with its result and evidence.

One function per kind of expectation; ``evaluate_expect`` runs those the case uses, in a fixed order.
This module holds the checks on which calls were made and how (required and forbidden calls, asking
the user, order, data flow); ``outcome_checks`` the counts, tiers, recovery and answer checks.
The ``Check`` model and its results are in ``check`` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tracekit.analyze import counts, outcome_checks
from tracekit.analyze.check import Check, CheckResult
from tracekit.analyze.matchers import MISSING, MatchContext, argument_value, equal_values, match_argument
from tracekit.analyze.values import values_at
from tracekit.cases.tool_schema import property_schema

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.analyze.graph import CallNode
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


def call_matches(run: CaseRun, expected: ExpectedCall, node: CallNode) -> tuple[bool, list[str]]:
    """Whether ``node`` satisfies an expected call (tool, every argument matcher, the whole-arguments matcher
    and ``no_extra_args``), with reasons."""
    if node.tool not in expected.tools:
        return False, [f"tool {node.tool} is not {' or '.join(expected.tools)}"]
    schema = _input_schema(run, node.tool)
    earlier = [other for other in run.graph.nodes if other.index != node.index and other.returned_before(node)]
    ok, reasons = True, []
    for name, matcher in expected.args.items():
        context = MatchContext(
            now=run.case.context.now,
            weekday=run.case.context.weekday,
            param_schema=property_schema(schema, name) if schema else None,
            earlier=earlier,
        )
        value = argument_value(node.arguments, name)
        matched, why = match_argument(matcher, value, context)
        ok = ok and matched
        reasons.append(f"{name}: {'ok' if matched else 'no'} ({why})")
    if expected.args_exact is not None:
        matched = equal_values(expected.args_exact, node.arguments)
        ok = ok and matched
        reasons.append(f"arguments: {'ok' if matched else 'no'} (expected exactly {expected.args_exact!r}, "
                       f"got {node.arguments!r})")  # fmt: skip
    if expected.no_extra_args:
        named = set(expected.args) | set(expected.args_exact or {})
        extra = sorted(set(node.arguments) - named) if isinstance(node.arguments, dict) else []
        ok = ok and not extra
        shown = f" (extra: {', '.join(extra)})" if extra else ""
        reasons.append(f"no extra arguments: {'ok' if not extra else 'no'}{shown}")
    return ok, reasons


def match_distinct(candidates: Sequence[Sequence[int]]) -> list[int | None]:
    """A maximum matching of expected items to distinct actual items: ``candidates[i]`` lists the actual
    items expected item ``i`` may take (in order of preference); the answer gives each expected item its
    actual item, or None. Two expected calls are never satisfied by one call."""
    owner: dict[int, int] = {}

    def assign(item: int, seen: set[int]) -> bool:
        for actual in candidates[item]:
            if actual in seen:
                continue
            seen.add(actual)
            if actual not in owner or assign(owner[actual], seen):
                owner[actual] = item
                return True
        return False

    for item in range(len(candidates)):
        assign(item, set())
    chosen: list[int | None] = [None] * len(candidates)
    for actual, item in owner.items():
        chosen[item] = actual
    return chosen


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


# --------------------------------------------------------------------------- order and data flow


def order_holds(
    mode: str,
    sequence: list[str],
    tools: list[str],
    fits: Callable[[int, int], bool] | None = None,
    turns: list[int] | None = None,
) -> bool:
    """Whether the agent's calls meet an order requirement (see ``CallOrder``).

    ``sequence`` are the tools of the calls, ``tools`` the expected tools; ``fits(i, j)`` says whether call
    ``j`` satisfies expected call ``i`` (default: same tool); ``turns`` the assistant turn of each call, so
    that calls issued together may come in any order among themselves under ``strict``.
    Calls are counted as multisets and matched one to one, as agentevals does."""
    fit = fits or (lambda i, j: tools[i] == sequence[j])
    expected, actual = range(len(tools)), range(len(sequence))
    if mode == "strict":
        if len(sequence) != len(tools):
            return False
        groups = _turn_groups(turns or list(actual))
        return all(
            all(item is not None for item in match_distinct([[j for j in group if fit(i, j)] for i in group]))
            for group in groups
        )
    if mode == "in-order":
        position = 0
        for i in expected:
            position = next((j for j in range(position, len(sequence)) if fit(i, j)), -1) + 1
            if position == 0:
                return False
        return True
    superset = all(item is not None for item in match_distinct([[j for j in actual if fit(i, j)] for i in expected]))
    subset = all(item is not None for item in match_distinct([[i for i in expected if fit(i, j)] for j in actual]))
    if mode in ("any-order", "superset"):
        return superset
    if mode == "subset":
        return subset
    if mode == "unordered":
        return len(sequence) == len(tools) and superset
    raise ValueError(f"unknown order mode {mode!r}")


def _turn_groups(turns: list[int]) -> list[list[int]]:
    """Positions of consecutive calls issued in the same turn."""
    groups: list[list[int]] = []
    for position, turn in enumerate(turns):
        if groups and turns[groups[-1][-1]] == turn:
            groups[-1].append(position)
        else:
            groups.append([position])
    return groups


def _order(run: CaseRun) -> Iterator[Check]:
    order = run.case.expect.order
    if order is None:
        return
    judged = run.judged
    sequence = [node.tool for node in judged]
    items = order.tools

    def fits(i: int, j: int) -> bool:
        item = items[i]
        if isinstance(item, str):
            return item == judged[j].tool
        return call_matches(run, item, judged[j])[0]

    ok = order_holds(order.mode, sequence, order.tool_names, fits, [node.turn for node in judged])
    shown = " → ".join(sequence) or "no calls"
    expected = [item if isinstance(item, str) else item.model_dump(exclude_defaults=True) for item in items]
    names = [item if isinstance(item, str) else "|".join(item.tools) for item in items]
    yield Check(
        f"order:{order.mode}",
        "pass" if ok else "fail",
        f"calls: {shown}; expected ({order.mode}): {' → '.join(names)}",
        [node.index for node in judged],
        expected,
        sequence,
    )


def _data_flow(run: CaseRun) -> Iterator[Check]:
    for flow in run.case.expect.data_flow:
        name = f"data_flow:{flow.from_tool}.{flow.from_path}->{flow.to_tool}.{flow.to_arg}"
        targets = [node for node in run.judged if node.tool == flow.to_tool]
        if not targets:
            yield Check(name, "fail", f"{flow.to_tool} was never called")
            continue
        evidence = []
        passed = None
        for node in targets:
            value = argument_value(node.arguments, flow.to_arg)
            sources = [
                s for s in run.graph.nodes if s.tool == flow.from_tool and s.succeeded and s.returned_before(node)
            ]
            source = next(
                (s for s in sources if any(equal_values(v, value) for v in values_at(s.result, flow.from_path))), None
            )
            if value is not MISSING and source is not None:
                passed = (node, source, value)
                break
            evidence.append(
                f"#{node.index} {flow.to_arg}={value!r}" + ("" if sources else f" (no {flow.from_tool} before)")
            )
        if passed:
            node, source, value = passed
            yield Check(
                name,
                "pass",
                f"call #{node.index} passes {value!r} from call #{source.index}",
                [source.index, node.index],
            )
        else:
            yield Check(
                name,
                "fail",
                f"{flow.to_arg} does not come from {flow.from_tool}.{flow.from_path}: " + "; ".join(evidence),
                [node.index for node in targets],
            )


def _no_repeated_calls(run: CaseRun) -> Iterator[Check]:
    if run.case.expect.no_repeated_calls is not True:
        return
    repeats = [
        node
        for node in run.judged
        if any(o.key == node.key and o.succeeded and o.returned_before(node) for o in run.graph.nodes)
    ]
    if repeats:
        yield Check(
            "no_repeated_calls",
            "fail",
            "repeated an earlier successful call: " + ", ".join(f"#{n.index} {n.tool}" for n in repeats),
            [n.index for n in repeats],
        )
    else:
        yield Check("no_repeated_calls", "pass", "no call repeats an earlier successful call")


def _parallel(run: CaseRun) -> Iterator[Check]:
    for group in run.case.expect.parallel:
        turns = {node.tool: node.turn for node in run.judged if node.tool in group}
        together = len(turns) == len(set(group)) and len(set(turns.values())) == 1
        state = "issued in one turn" if together else "not issued in one turn"
        yield Check(f"parallel:{'+'.join(group)}", "info", f"{', '.join(group)} {state} (a performance note)")


def _input_schema(run: CaseRun, tool: str) -> dict[str, Any] | None:
    catalog = run.catalog
    return catalog[tool].input_schema if catalog is not None and tool in catalog else None


_CHECKS: list[Callable[[CaseRun], Iterator[Check]]] = [
    _required_calls,
    _forbidden_tools,
    _forbidden_calls,
    _no_tool_call,
    _ask_user,
    _order,
    _data_flow,
    _no_repeated_calls,
    _parallel,
]
