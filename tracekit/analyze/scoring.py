"""Scores of a case run: seed 003's 100-point tool-use score and seed 001's efficiency figures.

Seed 003 (``003_2a7f1a00ccb9142a.txt``), as cases/traps/SCORING.md pins it down; calls are the tool
calls after the history, retries included:

- selection, 40: each call is tiered best (40) / acceptable (30) / wrong (0) (``selection.py``) and the
  score is their mean; with no call it is 40 ("无工具调用"), and ``none_wrong`` says when answering
  without a tool was the wrong choice. Calling a tool where ``none`` is best is ``over_tooling``.
- parameters, 20: share of calls whose parameters are right. A call's parameters are wrong when the call
  failed (error flag, empty result, 「[错误]」 / 「错误:」) other than by the case's own injection; when they
  break the tool's schema or the case's expected arguments for that tool; or when they break a seed 003
  parameter rule: the case's (``forbidden_calls`` noted 「参数语义规则」) or, for cases that state none,
  the generic ones (SQL needs WHERE or LIMIT; a search needs a time range or an entity; a calculator a
  math expression).
- recovery, 20: share of failure episodes recovered by a later successful call (``recovery.py``). With
  no failure the seed's 20 points stand and the state says so: ``untested`` ("No failure observed,
  recovery untested") or ``untested_with_mechanism``. The mechanism bonus (+5 on the total, reported on
  its own line) is given when the agent retried or fell back after a failure.
- efficiency, 20: minimal necessary calls (``expect.minimal_calls``; else the number of distinct tools
  used, the seed's fallback), at least 1, divided by the actual calls, at most 1.

Total: the sum plus the bonus, at most 100; 优秀 from 80, 合格 from 60, else 不合格.

Seed 001 (``001_141120856610bd3f.txt``): efficiency ratio = actual steps / optimal steps (2 steps where
1 is optimal is 2.0), redundant-call rate, output tokens, and the overall efficiency score
(optimal steps / steps) x (optimal tokens / tokens) x 100, each factor at most 1 so that doing less than
the optimum does not score above 100.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tracekit.analyze.call_matching import call_matches
from tracekit.analyze.checks import is_parameter_rule
from tracekit.analyze.recovery import ERROR_PREFIXES, has_recovery_mechanism, recovery_episodes
from tracekit.analyze.selection import TIER_POINTS, none_tier, tool_tier
from tracekit.analyze.values import leaves
from tracekit.cases.tool_schema import check_value

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.analyze.graph import CallNode

MECHANISM_BONUS = 5.0
UNTESTED_NOTE = "No failure observed, recovery untested"

_TIME = re.compile(
    r"\d{4}|\d{1,2}\s*月|季度|年|周|星期|今天|明天|后天|昨天|近期|最近|本月|上月|下月|\d{1,2}[-/]\d{1,2}"
)
_GENERIC_WORDS = re.compile(
    r"信息|数据|内容|新闻|东西|资料|搜索|查询|结果|一下|相关|什么|最新|热门|推荐|的|"
    r"\b(?:info|information|data|news|latest|search|stuff|things|results?)\b",
    re.I,
)
_MATH = re.compile(r"^[\d\s+\-*/().%,^]+$")


def parameter_problems(run: CaseRun, node: CallNode) -> list[str]:
    """Why a call's parameters are wrong (empty when they are right), per cases/traps/SCORING.md."""
    if not isinstance(node.arguments, dict):
        return ["arguments are not a JSON object"]
    problems: list[str] = []
    text = node.result_text.strip()
    if node.has_result and (node.is_error or not text or text.startswith(ERROR_PREFIXES)) and not _injected(run, node):
        problems.append(f"the call failed: {text[:80]!r}")
    catalog = run.catalog
    if catalog is not None and node.tool in catalog:
        problems += check_value(catalog[node.tool].input_schema, node.arguments)
    expected = [call for call in run.case.expect.calls if node.tool in call.tools and call.args]
    if expected:
        outcomes = [call_matches(run, call, node) for call in expected]
        if not any(ok for ok, _ in outcomes):
            problems += [reason for reason in outcomes[0][1] if ": no " in reason]
    rules = [rule for rule in run.case.expect.forbidden_calls if is_parameter_rule(rule)]
    if rules:
        problems += [rule.note or "parameter rule" for rule in rules if call_matches(run, rule, node)[0]]
    else:
        problems += semantic_problems(node, _tool_kind(run, node.tool))
    return problems


def semantic_problems(node: CallNode, kind: str | None) -> list[str]:
    """Seed 003's light semantic rules, for cases that do not state their own: SQL needs WHERE or LIMIT;
    a search needs a time range or an entity (anything beyond generic words); a calculator needs a
    math expression."""
    texts = _string_leaves(node.arguments)
    joined = " ".join(texts)
    problems = []
    if "SELECT" in joined.upper() and "WHERE" not in joined.upper() and "LIMIT" not in joined.upper():
        problems.append("SQL without WHERE/LIMIT (full table scan)")
    elif kind == "search" or (kind is None and "search" in node.tool):
        has_time = _TIME.search(joined) is not None
        has_entity = any(len(_GENERIC_WORDS.sub("", text).strip()) >= 2 for text in texts)
        if texts and not has_time and not has_entity:
            problems.append("search without a time range or an entity (too generic)")
    if "calc" in node.tool.lower():
        expression = next(iter(texts), "")
        if not _MATH.match(expression.strip() or "x"):
            problems.append("calculator input is not a math expression")
    return problems


def tool_use_score(run: CaseRun) -> dict[str, Any]:
    """Seed 003's four-dimension score with its details (cases/traps/SCORING.md)."""
    judged = run.judged
    n = len(judged)
    tiers = {node.index: tool_tier(run, node.tool) for node in judged}
    breakdown = {"best": 0, "acceptable": 0, "wrong": 0}
    for tier, _ in tiers.values():
        breakdown[tier] += 1
    if n:
        selection = min(sum(TIER_POINTS[tier] for tier, _ in tiers.values()) / n, 40.0)
        selection_detail = f"best={breakdown['best']}, acceptable={breakdown['acceptable']}, wrong={breakdown['wrong']}"
    else:
        selection, selection_detail = 40.0, "无工具调用"
    problems = {node.index: parameter_problems(run, node) for node in judged}
    correct = sum(1 for found in problems.values() if not found)
    parameters = 20.0 * correct / n if n else 20.0
    episodes = recovery_episodes(run)
    mechanism = has_recovery_mechanism(episodes)
    if episodes:
        recovered = sum(1 for episode in episodes if episode.recovered)
        recovery = 20.0 * recovered / len(episodes)
        recovery_state = "tested"
        recovery_detail = f"{recovered}/{len(episodes)} 恢复"
    elif mechanism:
        recovery, recovery_state, recovery_detail = 20.0, "untested_with_mechanism", "无失败，但检测到恢复机制（retry）"
    else:
        recovery, recovery_state, recovery_detail = 20.0, "untested", UNTESTED_NOTE
    minimal = run.case.expect.minimal_calls
    optimal = max(minimal if minimal is not None else len({node.tool for node in judged}), 1)
    efficiency = 20.0 * min(optimal / n, 1.0) if n else 20.0
    bonus = MECHANISM_BONUS if mechanism else 0.0
    total = min(selection + parameters + recovery + efficiency + bonus, 100.0)
    return {
        "total": round(total, 2),
        "grade": "优秀" if total >= 80 else "合格" if total >= 60 else "不合格",
        "selection": round(selection, 2),
        "parameters": round(parameters, 2),
        "recovery": round(recovery, 2),
        "efficiency": round(efficiency, 2),
        "mechanism_bonus": bonus,
        "recovery_state": recovery_state,
        "recovery_untested": not episodes and not mechanism,
        "has_recovery_mechanism": mechanism,
        "selection_breakdown": breakdown,
        "over_tooling": bool(n) and none_tier(run) == "best",
        "none_wrong": not n and none_tier(run) == "wrong",
        "details": {
            "selection": selection_detail,
            "tiers": {str(i): {"tool": run.graph.node(i).tool, "tier": t, "basis": b} for i, (t, b) in tiers.items()},
            "params": f"{correct}/{n} 正确" if n else "无参数",
            "param_problems": {str(i): found for i, found in problems.items() if found},
            "recovery": recovery_detail,
            "recovery_episodes": [episode.describe() for episode in episodes],
            "efficiency": f"{n} 次调用（最小必要 {optimal} 次）" if n else "无调用",
        },
    }


def efficiency_score(run: CaseRun) -> dict[str, Any]:
    """Seed 001's efficiency figures: ratio, redundancy, tokens, overall efficiency score."""
    judged = run.judged
    steps = len(judged)
    optimal_steps, optimal_tokens = optimal_figures(run)
    tokens = run.answer_tokens
    redundant = [
        node.index
        for node in judged
        if any(o.key == node.key and o.succeeded and o.returned_before(node) for o in run.graph.nodes)
    ]
    result: dict[str, Any] = {
        "steps": steps,
        "optimal_steps": optimal_steps,
        "efficiency_ratio": round(steps / optimal_steps, 3) if optimal_steps else None,
        "redundant_calls": redundant,
        "redundant_call_rate": round(len(redundant) / steps, 3) if steps else 0.0,
        "output_tokens": tokens.tokens,
        "token_method": tokens.method,
        "optimal_tokens": optimal_tokens,
        "overall_score": None,
    }
    if optimal_steps is not None and optimal_tokens and tokens.tokens:
        step_factor = min(optimal_steps / steps, 1.0) if steps else 1.0
        token_factor = min(optimal_tokens / tokens.tokens, 1.0)
        result["overall_score"] = round(step_factor * token_factor * 100, 1)
    return result


def optimal_figures(run: CaseRun) -> tuple[int | None, int | None]:
    """Optimal steps and tokens: ``expect.minimal_calls`` (and ``expect.optimal_tokens`` when the model
    has it), else the seed's 理论最优 lines (``1 步，150 tokens``, ``约 150 tokens``)."""
    expect = run.case.expect
    steps: int | None = expect.minimal_calls
    tokens: int | None = getattr(expect, "optimal_tokens", None)
    for label, text in run.case.seed_fields.items():
        if "理论最优" not in label:
            continue
        if steps is None and "步" in label + text:
            match = re.search(r"(\d+)\s*(?:-\s*\d+\s*)?步", text) or re.match(r"\s*(\d+)", text)
            steps = int(match[1]) if match else None
        if tokens is None:
            match = re.search(r"(\d+)\s*(?:-\s*\d+\s*)?tokens", text, re.I)
            tokens = int(match[1]) if match else None
    return steps, tokens


def _tool_kind(run: CaseRun, tool: str) -> str | None:
    catalog = run.catalog
    return catalog[tool].kind if catalog is not None and tool in catalog else None


def _injected(run: CaseRun, node: CallNode) -> bool:
    return (
        any(record.call_index == node.index and record.injected for record in run.trace.kind("tool_result"))
        or node.tool in run.case.intercepted_tool_names()
    )


def _string_leaves(value: Any) -> list[str]:
    return [leaf for _, leaf in leaves(value) if isinstance(leaf, str)]
