"""Matching a case's expected calls to the calls an agent made: one call against one expectation
(``call_matches``), and expected items to distinct actual items (``match_distinct``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tracekit.analyze.matchers import MatchContext, argument_value, equal_values, match_argument
from tracekit.cases.tool_schema import property_schema

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.analyze.graph import CallNode
    from tracekit.cases import ExpectedCall


def call_matches(run: CaseRun, expected: ExpectedCall, node: CallNode) -> tuple[bool, list[str]]:
    """Whether ``node`` satisfies an expected call (tool, every argument matcher, the whole-arguments matcher
    and ``no_extra_args``), with reasons."""
    if node.tool not in expected.tools:
        return False, [f"tool {node.tool} is not {' or '.join(expected.tools)}"]
    schema = input_schema(run, node.tool)
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


def input_schema(run: CaseRun, tool: str) -> dict[str, Any] | None:
    """The input schema the case's tool catalog gives ``tool`` (None: no catalog or no such tool)."""
    catalog = run.catalog
    return catalog[tool].input_schema if catalog is not None and tool in catalog else None
