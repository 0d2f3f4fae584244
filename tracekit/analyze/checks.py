"""Case checks: every machine check of a case's ``expect``, each with its result and evidence.

One function per kind of expectation; ``evaluate_expect`` runs those the case uses, in a fixed order.
This module holds the checks on which calls were made and how (required and forbidden calls, asking
the user, order, data flow); ``outcome_checks`` the counts, tiers, recovery and answer checks.
The ``Check`` model and its results are in ``check`` (re-exported here).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from tracekit.analyze import counts, outcome_checks
from tracekit.analyze.check import Check, CheckResult
from tracekit.analyze.matchers import MISSING, MatchContext, argument_value, equal_values, match_argument
from tracekit.analyze.values import values_at
from tracekit.cases.tool_schema import property_schema

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.analyze.graph import CallNode
    from tracekit.cases import ExpectedCall

#: How a ``forbidden_calls`` note marks a seed 003 parameter rule (cases/traps/SCORING.md).
PARAMETER_RULE_NOTE = "参数语义规则"

def evaluate_expect(run: CaseRun) -> list[Check]:
    """Every machine check the case's ``expect`` asks for."""
    checks: list[Check] = []
    for evaluate in [*_CHECKS, *outcome_checks.CHECKS]:
        checks.extend(evaluate(run))
    return checks


# --------------------------------------------------------------------------- required and forbidden calls


def call_matches(run: CaseRun, expected: ExpectedCall, node: CallNode) -> tuple[bool, list[str]]:
    """Whether ``node`` satisfies an expected call (tool and every argument matcher), with reasons."""
    if node.tool not in expected.tools:
        return False, [f"tool {node.tool} is not {' or '.join(expected.tools)}"]
    schema = _input_schema(run, node.tool)
    earlier = [other for other in run.graph.nodes if other.index != node.index and other.returned_before(node)]
    ok, reasons = True, []
    for name, matcher in expected.args.items():
        context = MatchContext(
            now=run.case.context.now,
            param_schema=property_schema(schema, name) if schema else None,
            earlier=earlier,
        )
        value = argument_value(node.arguments, name)
        matched, why = match_argument(matcher, value, context)
        ok = ok and matched
        reasons.append(f"{name}: {'ok' if matched else 'no'} ({why})")
    return ok, reasons


def _required_calls(run: CaseRun) -> Iterator[Check]:
    for position, expected in enumerate(run.case.expect.calls):
        name = f"calls[{position}]:{'|'.join(expected.tools)}"
        candidates = [node for node in run.judged if node.tool in expected.tools]
        if not candidates:
            called = ", ".join(node.tool for node in run.judged) or "no tool"
            yield Check(name, "fail", f"{' or '.join(expected.tools)} was never called (called: {called})")
            continue
        outcomes = [(node, *call_matches(run, expected, node)) for node in candidates]
        good = next((outcome for outcome in outcomes if outcome[1]), None)
        if good is not None:
            node, _, reasons = good
            detail = f": {'; '.join(reasons)}" if reasons else ""
            yield Check(name, "pass", f"call #{node.index} {node.tool}{detail}", [node.index])
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


def order_holds(mode: str, sequence: list[str], tools: list[str]) -> bool:
    """Whether a sequence of tool names meets an order requirement (see ``CallOrder``)."""
    if mode == "strict":
        return sequence == tools
    if mode == "in-order":
        remaining = iter(sequence)
        return all(any(name == tool for name in remaining) for tool in tools)
    if mode == "any-order":
        have = Counter(sequence)
        return all(have[tool] >= count for tool, count in Counter(tools).items())
    if mode == "subset":
        return set(sequence) <= set(tools)
    if mode == "superset":
        return set(sequence) >= set(tools)
    raise ValueError(f"unknown order mode {mode!r}")


def _order(run: CaseRun) -> Iterator[Check]:
    order = run.case.expect.order
    if order is None:
        return
    sequence = [node.tool for node in run.judged]
    ok = order_holds(order.mode, sequence, order.tools)
    shown = " → ".join(sequence) or "no calls"
    yield Check(
        f"order:{order.mode}",
        "pass" if ok else "fail",
        f"calls: {shown}; expected ({order.mode}): {' → '.join(order.tools)}",
        [node.index for node in run.judged],
        order.tools,
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
