"""Case checks on the sequence of calls: their order (``order_holds``), the data that flows from one call's
result into another's arguments, calls that repeat a successful call, and calls meant to run in parallel."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from tracekit.analyze.call_matching import call_matches, match_distinct
from tracekit.analyze.check import Check
from tracekit.analyze.matchers import MISSING, argument_value, equal_values
from tracekit.analyze.values import values_at

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun


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


def order_checks(run: CaseRun) -> Iterator[Check]:
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


def data_flow_checks(run: CaseRun) -> Iterator[Check]:
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


def repeated_call_checks(run: CaseRun) -> Iterator[Check]:
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


def parallel_checks(run: CaseRun) -> Iterator[Check]:
    for group in run.case.expect.parallel:
        turns = {node.tool: node.turn for node in run.judged if node.tool in group}
        together = len(turns) == len(set(group)) and len(set(turns.values())) == 1
        state = "issued in one turn" if together else "not issued in one turn"
        yield Check(f"parallel:{'+'.join(group)}", "info", f"{', '.join(group)} {state} (a performance note)")
