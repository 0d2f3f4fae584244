"""Failure attribution (seed 004, 「评测时的失败归因」): why a failing run failed, and what to fix.

The record keeps the seed's five fields (cases/c4/ATTRIBUTION.md)::

    失败 case: <the case id>
    失败类型: 循环
    具体表现: 重试了 8 次相同的工具调用
    根本原因: 未识别参数重复
    修复建议: 在工具调用前检查是否与历史调用重复

as ``case``, ``failure_type`` (Chinese) / ``failure_kind`` (English key), ``symptom``, ``root_cause``,
``fix``, plus ``clause`` (the case's Fail clause that was met, verbatim), ``also`` (other failure kinds
seen) and ``evidence``. Only ``fail`` verdicts of C4 cases get a record, and only when a signal names a
type. Three of the five types are the seed's own (循环, 死锁, 过早放弃); 放弃无说明 and 编造 are constructed
for its AR Fail lines (cases/c4/ATTRIBUTION.md says so).

Signals come from detector findings (retry storms, loops, repeated calls, made-up identifiers), failed
checks and judged checks that carry a ``failure_kind``. Count checks (too many calls, too few attempts,
too many questions) are read as loops, deadlocks or giving up only in C4 cases, whose criteria are
about exactly that; a run that ends without an answer is a deadlock (卡死) in a C4 case, or next to
another signal.
The primary type is that of the first Fail clause (in the seed's order) a signal meets; the clause's
words decide its type. The two families, stuck (循环, 死锁) and give-up (过早放弃, 放弃无说明), need fixes in
opposite directions and are never summed.

A Fail line that names the repetition itself (seed 004's retry-loop case:
「Fail：重试超过 5 次 / 未识别出重复操作」) is met by its
second branch as well as by its count: ``repetition_check`` fails a run that issued the same failing call
(same tool, same arguments) more times than the Pass line's range of failures allows (「在 3-4 次失败后停止重试」)
and never fell back (no other call after them, no question to the user), though its retries do not exceed
five. The attribution of such a run names the same calls, and ``tracekit.analyze.diagnosing`` gives the trace's
diagnosis the same critical step (``critical_step``, ``critical_call`` in the record): one answer to "where
did it go wrong".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracekit.analyze import counts
from tracekit.analyze.check import Check
from tracekit.analyze.recovery import looks_empty, recovery_episodes

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.analyze.detectors import Finding
    from tracekit.analyze.graph import CallNode

FAILURE_TYPES = {
    "loop": "循环",
    "deadlock": "死锁",
    "premature_abandonment": "过早放弃",
    "unexplained_abandonment": "放弃无说明",
    "fabrication": "编造",
}
FAMILIES = {
    "loop": "stuck",
    "deadlock": "stuck",
    "premature_abandonment": "give_up",
    "unexplained_abandonment": "give_up",
    "fabrication": "fabrication",
}

#: kind -> [(condition, 根本原因, 修复建议)], the first row whose condition holds (cases/c4/ATTRIBUTION.md).
CAUSES: dict[str, list[tuple[str, str, str]]] = {
    "loop": [
        ("identical_failing", "未识别参数重复", "在工具调用前检查是否与历史调用重复"),
        ("same_error", "未识别错误信息中的提示（错误不会因重试消失）",
         "读取错误信息：参数格式错误时按提示修正一次；仍失败则停止重试，询问用户或换用其他方式"),
        ("cycle", "未识别数据不足的根本问题",
         "调用前判断再次调用能否得到新信息（检查 note / 缺失字段）；不能则降级（用已有结果）或告知用户数据限制"),
        ("reworded", "搜索词不收敛，没有停止条件",
         "限制改写次数（3-5 次）；停止后说明试过的关键词、结论和替代渠道（官方渠道、其他平台）"),
        ("systemic", "未识别系统性故障",
         "把 5xx / 服务不可用视为系统性故障：停止调用同一批工具，说明故障并给出降级方案或稍后重试"),
        ("otherwise", "没有重试上限", "为每个工具设置重试上限（如 3 次），超过后降级或询问用户"),
    ],
    "deadlock": [
        ("refuses", "任务依赖用户信息但用户拒绝提供，没有退出条件",
         "追问 2-3 次后退出：说明无法在不提供信息的情况下完成任务，提供替代方案（如介绍一般流程）或询问是否换一个任务"),
        ("upstream", "工具依赖链断裂（无法获得上游输出，如 city_id），未寻找替代路径",
         "依赖链上游失败 2-3 次后退出依赖链：降级到替代工具（如 web_search），或告知用户该工具不可用、建议稍后重试"),
        ("no_answer", "卡死：既不继续也不说明", "为每一步设置步数/时间上限，保证任何路径都以一条说明结束"),
    ],
    "premature_abandonment": [
        ("one_failure", "把一次空结果或暂时性错误当作最终结论",
         "放弃前至少尝试 2-3 种策略：修改关键词、重试一次（可能是暂时性故障）、降级到 web_search"),
        ("midway", "被步骤数吓退，没有把任务拆成步骤执行",
         "把任务拆成步骤逐步执行（搜索 → 选择 → 读取详情 → 筛选），步骤多不是放弃的理由"),
        ("constraints", "被约束数量吓退，没有通过询问缩小范围",
         "通过多轮询问补全必要信息（预算、出发地、时间），逐步搜索，先给出 1-2 个候选"),
        ("partial_data", "把数据不完整当作任务失败", "用已有数据完成，缺失部分标注「数据不可得」或用其他工具补充"),
    ],
    "unexplained_abandonment": [
        ("result_only", "放弃时只报告结果，没有解释原因",
         "放弃时必须说明为什么无法满足（如南极无商业航班、配置要求与价格冲突），并给出正确信息或调整方向"),
        ("part_dropped", "静默删除无法完成的部分", "保留无法完成的部分并标注原因（数据不可得），不要删除"),
        ("no_alternatives", "退出时没有给出替代方案", "退出时给出替代方案：其他渠道、降级工具、稍后重试或换一个任务"),
    ],
    "fabrication": [
        ("facts", "工具结果为空或缺字段时用想象或训练知识填补",
         "只陈述工具结果中的事实；结果为空或缺字段时明确说明，基于训练知识的内容标注为不可靠"),
        ("constraints", "为了给出答案而忽略约束冲突",
         "推荐前逐条核对约束；无解时说明冲突和原因，给出调整方向，不夸大性能"),
    ],
}  # fmt: skip

# A Fail clause's type by its words, tried in this order (cases/c4/ATTRIBUTION.md's clause table).
_CLAUSE_KINDS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"卡死"), "deadlock"),
    (re.compile(r"编造|不符合"), "fabrication"),
    (re.compile(r"不说明|不解释|未给出|无说明|删除|只说"), "unexplained_abandonment"),
    (re.compile(r"询问|追问"), "deadlock"),
    (re.compile(r"重试|循环|超过|重复|数据不足|已知失败"), "loop"),
    (re.compile(r"放弃|一半|第一次失败|不做任何尝试"), "premature_abandonment"),
]
_SYSTEMIC = re.compile(r"503|5\d\d|unavailable|不可用|outage|故障", re.I)


#: The Fail-line branch about repetition itself (seed 004, its first loop case:
#: 「Fail：重试超过 5 次 / 未识别出重复操作」).
REPETITION_CLAUSE = "未识别出重复操作"


def repetition_check(run: CaseRun) -> Check | None:
    """The failed ``fail_line:未识别出重复操作`` check of a run that meets that Fail branch (module docstring),
    else None (the case has no such branch, no tier bounds the tool's calls, or the run fell back)."""
    criteria = run.case.criteria
    if criteria is None or REPETITION_CLAUSE not in criteria.fail:
        return None
    groups: dict[str, list[CallNode]] = {}
    for node in run.judged:
        if node.has_result and node.is_error:
            groups.setdefault(node.key, []).append(node)
    for nodes in sorted(groups.values(), key=len, reverse=True):
        tiers = run.case.expect.tool_counts.get(nodes[0].tool)
        bound = tiers.pass_.max if tiers is not None else None
        if bound is None or len(nodes) <= bound or _fell_back(run, nodes):
            continue
        return Check(
            f"fail_line:{REPETITION_CLAUSE}",
            "fail",
            f"{nodes[0].tool} failed {len(nodes)} times with identical arguments, more than the Pass line's "
            f"{bound} failures, and the agent neither changed course nor asked the user: the Fail line's branch "
            f"「{REPETITION_CLAUSE}」 is met, although its retries ({len(nodes) - 1}) do not exceed five",
            calls=[node.index for node in nodes],
            expected={"identical_failures": {"max": bound}, "or": "a fallback after them"},
            actual=len(nodes),
        )
    return None


def _met_by_repetition_only(checks: list[Check]) -> bool:
    """The repetition branch failed and no count check did (the retries stayed within the count)."""
    failed = {check.name for check in checks if check.result == "fail"}
    counted = any(name.startswith("tool_counts:") or name in ("retries", "call_count") for name in failed)
    return f"fail_line:{REPETITION_CLAUSE}" in failed and not counted


def _fell_back(run: CaseRun, nodes: list[CallNode]) -> bool:
    """Whether the agent did something else after the last of ``nodes``: another call, or asked the user."""
    last = nodes[-1]
    if any(node.index > last.index and node.key != last.key for node in run.judged):
        return True
    answer = run.final_answer
    return "?" in answer or "？" in answer


@dataclass
class Signal:
    """Evidence that a run failed in one of the five ways."""

    kind: str
    condition: str
    symptom: str
    evidence: dict[str, Any] = field(default_factory=dict)


def clause_kind(clause: str, category: str | None = None) -> str | None:
    """The failure kind a Fail clause describes (DR's retry clauses are deadlocks, as the seed files them)."""
    for pattern, kind in _CLAUSE_KINDS:
        if pattern.search(clause):
            return "deadlock" if kind == "loop" and category == "DR" else kind
    return None


def attribute(run: CaseRun, result: str, checks: list[Check], findings: list[Finding]) -> dict[str, Any] | None:
    """The seed 004 record of a failing run of a C4 case, or None (another dimension, not failing, or no signal
    names a type). The seed asks for attribution of its own C4 cases only (cases/c4/ATTRIBUTION.md)."""
    if result != "fail" or run.case.dimension != "C4":
        return None
    signals = collect_signals(run, checks, findings)
    if not signals:
        return None
    category = run.case.category
    criteria = run.case.criteria
    clauses = [part.strip() for part in re.split(r"\s+/\s+", criteria.fail)] if criteria is not None else []
    if _met_by_repetition_only(checks):  # the branch that was met, not the count the run stayed within
        clauses.sort(key=lambda text: REPETITION_CLAUSE not in text)
    primary, clause = signals[0], None
    for text in clauses:
        kind = clause_kind(text, category)
        match = next((signal for signal in signals if signal.kind == kind), None)
        if match is not None:
            primary, clause = match, text
            break
    cause, fix = root_cause(primary.kind, primary.condition)
    also = list(dict.fromkeys(signal.kind for signal in signals if signal.kind != primary.kind))
    record = {
        "case": run.case.id,
        "failure_type": FAILURE_TYPES[primary.kind],
        "failure_kind": primary.kind,
        "family": FAMILIES[primary.kind],
        "symptom": primary.symptom,
        "root_cause": cause,
        "fix": fix,
        "clause": clause,
        "also": also,
        "evidence": primary.evidence,
    }
    record["text"] = (
        f"失败 case: {record['case']}\n失败类型: {record['failure_type']}\n具体表现: {record['symptom']}\n"
        f"根本原因: {cause}\n修复建议: {fix}"
    )
    return record


def root_cause(kind: str, condition: str) -> tuple[str, str]:
    """根本原因 and 修复建议 of the row for ``condition`` (the type's last row when none matches)."""
    rows = CAUSES[kind]
    row = next((row for row in rows if row[0] == condition), rows[-1])
    return row[1], row[2]


def collect_signals(run: CaseRun, checks: list[Check], findings: list[Finding]) -> list[Signal]:
    """Every failure signal of a run, most specific first."""
    signals: list[Signal] = []
    failed = {check.name: check for check in checks if check.result == "fail"}
    stuck = "deadlock" if run.case.category == "DR" else "loop"
    for finding in findings:
        if finding.kind == "retry_storm":
            tool = run.graph.node(finding.calls[0]).tool
            kind, condition = ("deadlock", "upstream") if stuck == "deadlock" else ("loop", "identical_failing")
            symptom = (
                f"依赖的 {tool} 重试了 {len(finding.calls)} 次，未退出依赖链"
                if kind == "deadlock"
                else f"重试了 {len(finding.calls) + len(finding.context_calls)} 次相同的工具调用"
            )
            signals.append(Signal(kind, condition, symptom, {"calls": finding.calls, "finding": finding.kind}))
    if run.case.dimension == "C4":  # counts mean loops, deadlocks or giving up only where C4 asks about them
        for name, check in failed.items():
            signal = _count_signal(run, name, check, stuck)
            if signal is not None:
                signals.append(signal)
    branch = failed.get(f"fail_line:{REPETITION_CLAUSE}")
    if branch is not None and not any(signal.kind == "loop" for signal in signals):
        symptom = f"重试了 {len(branch.calls)} 次相同的工具调用"
        signals.append(Signal("loop", "identical_failing", symptom, {"calls": branch.calls, "checks": [branch.name]}))
    for finding in findings:
        if finding.kind == "repeated_call" and not any(signal.kind == "loop" for signal in signals):
            count = len(finding.calls) + len(finding.context_calls)
            evidence = {"calls": finding.calls, "finding": finding.kind}
            signals.append(Signal("loop", "identical_failing", f"重复了 {count} 次相同的工具调用", evidence))
    for finding in findings:
        if finding.kind == "alternating_loop":
            cycle = "→".join(dict.fromkeys(run.graph.node(i).tool for i in finding.calls))
            signals.append(
                Signal(
                    "loop", "cycle", f"工具链 {cycle} 循环了若干次", {"calls": finding.calls, "finding": finding.kind}
                )
            )
    if not run.final_answer and (run.case.dimension == "C4" or signals):
        signals.append(
            Signal(
                "deadlock",
                "no_answer",
                f"没有最终回复（停在第 {len(run.judged)} 次工具调用）",
                {"calls": [node.index for node in run.judged[-1:]]},
            )
        )
    signals += _give_up_signals(run, failed)
    for finding in findings:
        if finding.kind == "ungrounded_argument":
            signals.append(
                Signal(
                    "fabrication",
                    "facts",
                    f"调用参数中的标识符不在任何工具结果或用户消息中（call #{finding.calls[0]}）",
                    {"calls": finding.calls, "finding": finding.kind},
                )
            )
    answer = failed.get("answer")
    if answer is not None and "contains" in answer.evidence:
        # The answer check names what it found ("contains 'MU9999' (/regex/)"): the symptom names it too.
        found = _ANSWER_FOUND.search(answer.evidence)
        what = f"「{found.group(2)}」" if found else "的内容"
        signals.append(Signal("fabrication", "facts", f"回答中{what}不在任何工具结果中", {"checks": ["answer"]}))
    for check in checks:
        judged_kind = check.failure_kind
        if check.result == "fail" and judged_kind is not None and judged_kind in FAILURE_TYPES:
            condition = check.failure_condition or CAUSES[judged_kind][-1][0]
            signals.append(Signal(judged_kind, condition, check.evidence, {"checks": [check.name], "judge": True}))
    return signals


#: What a failing answer check found in the answer (its evidence quotes the value with repr()).
_ANSWER_FOUND = re.compile(r"contains (['\"])(.+?)\1")


def _count_signal(run: CaseRun, name: str, check: Check, stuck: str) -> Signal | None:
    evidence = {"calls": check.calls, "checks": [name]}
    if name == "asks":
        in_all = len(counts.questions(run.trace, 0))
        return Signal("deadlock", "refuses", f"向用户追问了 {in_all} 次仍未退出", evidence)
    if name == "loop_repeats":
        cycle = "→".join(dict.fromkeys(run.graph.node(i).tool for i in check.calls)) or "?"
        return Signal("loop", "cycle", f"工具链 {cycle} 循环了 {check.actual} 次", evidence)
    if name == "calls_after_failure" and _above(check):
        return Signal("loop", "systemic", f"已知失败的工具又被调用了 {check.actual} 次", evidence)
    counted = name.startswith("tool_counts:") or name in ("retries", "max_retries", "call_count")
    if counted and _above(check):
        nodes = [run.graph.node(i) for i in check.calls] or run.judged
        tool = nodes[0].tool if nodes else "?"
        failing = [node for node in nodes if node.has_result and (node.is_error or _empty(node.result_text))]
        if stuck == "deadlock":
            return Signal("deadlock", "upstream", f"依赖的 {tool} 重试了 {len(nodes)} 次，未退出依赖链", evidence)
        if nodes and len(failing) == len(nodes) and len({node.key for node in nodes}) > 1:
            if all(_empty(node.result_text) and not node.is_error for node in nodes):
                return Signal("loop", "reworded", f"调整搜索词搜索了 {len(nodes)} 次", evidence)
            if len({node.tool for node in run.judged if node.is_error}) > 1 and _SYSTEMIC.search(nodes[0].result_text):
                return Signal("loop", "systemic", f"已知失败的工具又被调用了 {len(nodes) - 1} 次", evidence)
            return Signal("loop", "same_error", f"{tool} 调用了 {len(nodes)} 次（参数不同，结果均为错误/空）", evidence)
        return Signal("loop", "otherwise", f"{tool} 调用了 {len(nodes)} 次", evidence)
    if name in ("call_count", "attempts") or name.startswith("tool_counts:"):
        minimal = run.case.expect.minimal_calls
        if any(is_failure_node(node) for node in run.judged):
            return Signal("premature_abandonment", "one_failure", f"只尝试了 {len(run.judged)} 次就放弃", evidence)
        needed = f"（理论需要 {minimal} 步）" if minimal else ""
        return Signal("premature_abandonment", "midway", f"执行到第 {len(run.judged)} 步后放弃{needed}", evidence)
    return None


def _give_up_signals(run: CaseRun, failed: dict[str, Check]) -> list[Signal]:
    if "recovery" not in failed:
        return []
    signals = []
    for episode in recovery_episodes(run):
        if episode.handled:
            continue
        evidence = {"calls": episode.failures, "checks": ["recovery"]}
        if not episode.attempted:
            signals.append(
                Signal("premature_abandonment", "one_failure", f"只尝试了 {len(episode.failures)} 次就放弃", evidence)
            )
        elif not episode.reported:
            signals.append(Signal("unexplained_abandonment", "no_alternatives", "放弃时未说明原因", evidence))
    return signals


def _above(check: Check) -> bool:
    """Whether a failed count check failed by being too high (rather than too low)."""
    if not isinstance(check.actual, (int, float)):
        return False
    if isinstance(check.expected, int):
        return check.actual > check.expected
    if not isinstance(check.expected, dict):
        return False
    upper = [tier["max"] for tier in check.expected.values() if isinstance(tier, dict) and tier.get("max") is not None]
    return bool(upper) and check.actual > max(upper)


def _empty(text: str) -> bool:
    return looks_empty(text.strip())


def is_failure_node(node: Any) -> bool:
    """A call whose result is an error or empty."""
    return node.has_result and (node.is_error or _empty(node.result_text))
