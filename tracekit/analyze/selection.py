"""Seed 003's three-tier tool selection: which tier a tool is in for a case.

Tiers come from the case's ``tool_tiers`` (a tool in no tier is wrong, see cases/traps/SCORING.md).
Cases without them get tiers from their expectations: expected tools best, forbidden tools and tools
the case does not offer wrong (seed 003: a tool outside the registry is wrong), other offered tools
acceptable; when the case names no tool at all, offered tools count as best. ``none`` stands for
answering without a tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun

Tier = Literal["best", "acceptable", "wrong"]
TIER_POINTS: dict[str, float] = {"best": 40.0, "acceptable": 30.0, "wrong": 0.0}
"""Seed 003's points per tier (best=40, acceptable=30, wrong=0)."""


def tool_tier(run: CaseRun, tool: str) -> tuple[Tier, str]:
    """Seed 003's tier of a tool in this case, and where the tier comes from.

    With ``tool_tiers`` a tool in no tier is wrong (cases/traps/SCORING.md, after the seed's
    "a tool not in TOOL_SUITABILITY is wrong")."""
    case = run.case
    tiers = case.expect.tool_tiers
    if tiers is not None:
        for tier in ("best", "acceptable", "wrong"):
            if tool in getattr(tiers, tier):
                return tier, "tool_tiers"
        return "wrong", "not in tool_tiers"
    offered = case.context.tools
    if offered and tool not in offered:
        return "wrong", "not offered"
    if tool in case.expect.forbidden_tools:
        return "wrong", "forbidden"
    discouraged = case.discouraged_tool_names()
    if tool in discouraged:
        return "acceptable", "discouraged"
    expected = case.expected_tool_names() - set(case.expect.forbidden_tools) - discouraged
    if tool in expected:
        return "best", "expected"
    if not expected:
        return "best", "offered"
    return "acceptable", "offered"


def none_tier(run: CaseRun) -> Tier | None:
    """The tier of answering without a tool (``none``), when the case's ``tool_tiers`` list it."""
    tiers = run.case.expect.tool_tiers
    if tiers is None:
        return None
    return next((tier for tier in ("best", "acceptable", "wrong") if "none" in getattr(tiers, tier)), None)


def needs_a_tool(run: CaseRun) -> bool:
    """Whether the case's right answer involves a tool call."""
    expect = run.case.expect
    if expect.no_tool_call or expect.ask_user:
        return False
    if expect.tool_tiers is not None:
        return "none" not in expect.tool_tiers.best
    return bool(expect.calls) or bool(expect.minimal_calls)
