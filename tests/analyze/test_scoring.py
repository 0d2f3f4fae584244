"""Seed 003's 100-point score, seed 001's efficiency figures and seed 004's attribution, on hand-made runs."""

from __future__ import annotations

from typing import Any

from tracekit.analyze.attribution import attribute, clause_kind
from tracekit.analyze.binding import CaseRun, history_length
from tracekit.analyze.checks import evaluate_expect
from tracekit.analyze.detectors import DetectorContext, resolve_options, run_detectors
from tracekit.analyze.graph import build_graph
from tracekit.analyze.scoring import efficiency_score, tool_use_score
from tracekit.analyze.verdict import decide
from tracekit.cases import Case

from .factories import call, case_trace, say

SEARCH_RULE = {
    "tool": "search",
    "args": {"query": {"regex": "(?s)^(?!.*(?:2024|03|月|销售|品类|报告))"}},
    "note": "参数语义规则（seed 003）：Search 类参数必须包含时间范围或实体名称",
}
CALC_RULE = {
    "tool": "calculator",
    "args": {"expression": {"regex": r"^(?![\d\s+\-*/().%,]+$)"}},
    "note": "参数语义规则（seed 003）：Calculator 类参数必须是合法数学表达式",
}


def make_case(expect: dict[str, Any], *, case_id: str = "TT-09", fail: str = "x", **fields: Any) -> Case:
    dimension, category = ("TT", "TT") if case_id.startswith("TT") else (case_id[:2], case_id[3:5])
    return Case.model_validate(
        {
            "id": case_id,
            "dimension": dimension,
            "category": category,
            "title": "测试",
            "scoring": "auto",
            "seed": {"file": "test", "section": "test", "number": 1},
            "input": {"user": "分析 3 月份的销售数据"},
            "criteria": {"pass": "ok", "fail": fail},
            "expect": expect,
            **fields,
        }
    )


def run_of(case: Case, steps: list[Any], **options: Any) -> CaseRun:
    trace = case_trace(case, steps, **options)
    history = history_length(case)
    return CaseRun(trace, case, build_graph(trace.calls(history)), history)


def test_the_articles_good_demo_scores_93_3() -> None:
    # cases/traps/SCORING.md, "Worked example": result_good with input-based rules.
    case = make_case({"tool_tiers": {"best": ["search", "calculator"]}, "forbidden_calls": [SEARCH_RULE, CALC_RULE]})
    score = tool_use_score(
        run_of(
            case,
            [
                call("search", {"query": "2024-03 销售数据"}, "[search/经营] 已获取 2024-03 销售数据，共 1256 条记录"),
                call("calculator", {"expression": "(1250000 - 1055000) / 1055000 * 100"}, "18.48"),
                call("search", {"query": "生成 2024年3月销售分析报告"}, "[报告生成] 已生成"),
                say("服装品类增长最快，环比增长 18.5%"),
            ],
        )
    )
    assert (score["selection"], score["parameters"], score["recovery"], score["efficiency"]) == (40, 20, 20, 13.33)
    assert (score["total"], score["grade"]) == (93.33, "优秀")
    assert (
        score["recovery_state"] == "untested"
        and score["details"]["recovery"] == "No failure observed, recovery untested"
    )
    assert score["selection_breakdown"] == {"best": 3, "acceptable": 0, "wrong": 0}


def test_a_bad_run_with_failures_retries_and_wrong_tools() -> None:
    case = make_case(
        {
            "tool_tiers": {"best": ["search", "calculator", "code_executor"], "wrong": ["web_search"]},
            "forbidden_calls": [SEARCH_RULE, CALC_RULE],
        }
    )
    score = tool_use_score(
        run_of(
            case,
            [
                call("code_executor", {"code": "print(1)"}, "1"),
                call("web_search", {"query": "3 月销售"}, "错误: 未知工具 'web_search'", error=True),
                call("web_search", {"query": "3 月销售"}, "错误: 未知工具 'web_search'", error=True),
                call("calculator", {"expression": "环比增长率"}, "18.5%"),
                call("search", {"query": "生成报告"}, "错误: 报告生成失败 - 缺少日期范围参数"),
                say("执行完成"),
            ],
        )
    )
    # selection (40*3)/5 = 24; params: only code_executor is right = 4; recovery: web_search recovered
    # (calculator, a best-tier tool, succeeded after it), search not = 10; efficiency 4 tools / 5 calls = 16;
    # +5 for the retry of web_search.
    assert (score["selection"], score["parameters"], score["recovery"], score["efficiency"]) == (24, 4, 10, 16)
    assert (score["mechanism_bonus"], score["total"], score["grade"]) == (5, 59, "不合格")
    assert set(score["details"]["param_problems"]) == {"1", "2", "3", "4"}


def test_no_call_where_none_is_wrong_and_over_tooling() -> None:
    none_wrong = make_case({"tool_tiers": {"best": ["search"], "wrong": ["none"]}})
    run = run_of(none_wrong, [say("服装增长最快。")])
    score = tool_use_score(run)
    assert score["selection"] == 40 and score["none_wrong"] is True
    assert decide(evaluate_expect(run), needs_judge=False, judged=None) == "fail"
    over = make_case({"tool_tiers": {"best": ["none"], "wrong": ["calculator"]}, "minimal_calls": 0})
    score = tool_use_score(run_of(over, [call("calculator", {"expression": "1+1"}, "2"), say("2")]))
    assert score["over_tooling"] is True and score["selection"] == 0 and score["efficiency"] == 20


def test_seed_001_efficiency_ratio_and_overall_score() -> None:
    case = make_case({"minimal_calls": 1}, case_id="Q3-OE-09", seed_fields={"理论最优": "1 步，150 tokens"})
    one = efficiency_score(run_of(case, [call("maps_weather", {"city": "北京"}), say("晴")], answer_usage=150))
    assert (one["efficiency_ratio"], one["overall_score"]) == (1.0, 100.0)
    two = efficiency_score(
        run_of(case, [call("maps_web", {"q": 1}), call("maps_weather", {"city": "北京"}), say("晴")], answer_usage=300)
    )
    assert (two["steps"], two["efficiency_ratio"], two["overall_score"], two["token_method"]) == (2, 2.0, 25.0, "usage")
    repeated = efficiency_score(run_of(case, [call("a", {"x": 1}), call("a", {"x": 1}), say("晴")]))
    assert repeated["redundant_calls"] == [1] and repeated["redundant_call_rate"] == 0.5


def _attribution(case: Case, steps: list[Any]) -> dict[str, Any] | None:
    run = run_of(case, steps)
    findings = run_detectors(DetectorContext(run.graph, run.trace, None, case, run.history_messages), resolve_options())
    checks = evaluate_expect(run)
    return attribute(run, decide(checks, needs_judge=False, judged=None), checks, findings)


def test_attribution_of_a_retry_loop_in_the_seeds_shape() -> None:
    case = make_case(
        {"tool_counts": {"search_flights": {"pass": {"max": 4}, "acceptable": {"max": 6}}}},
        case_id="C4-LD-09",
        fail="重试超过 5 次 / 未识别出重复操作",
    )
    steps = [call("search_flights", {"date": "下周五"}, "Error: Invalid date", error=True) for _ in range(8)]
    record = _attribution(case, [*steps, say("查询失败。")])
    assert record is not None
    assert record["text"] == (
        "失败 case: C4-LD-09\n失败类型: 循环\n具体表现: 重试了 8 次相同的工具调用\n根本原因: 未识别参数重复\n"
        "修复建议: 在工具调用前检查是否与历史调用重复"
    )
    assert (record["clause"], record["family"], record["evidence"]["finding"]) == (
        "重试超过 5 次",
        "stuck",
        "retry_storm",
    )


def test_attribution_deadlock_premature_abandonment_and_passing_runs() -> None:
    dependency = make_case(
        {"tool_counts": {"beike_lookup_city_id": {"pass": {"max": 4}, "acceptable": {"max": 6}}}},
        case_id="C4-DR-09",
        fail="重试超过 5 次 / 卡死不继续也不说明",
    )
    steps = [call("beike_lookup_city_id", {"city_name": "北京"}, "Error: 503", error=True) for _ in range(7)]
    record = _attribution(dependency, [*steps, say("服务不可用。")])
    assert record is not None and (record["failure_type"], record["symptom"]) == (
        "死锁",
        "依赖的 beike_lookup_city_id 重试了 7 次，未退出依赖链",
    )
    stuck = _attribution(dependency, steps[:7])  # no final answer at all
    assert stuck is not None and stuck["failure_kind"] == "deadlock"
    give_up = make_case(
        {"call_count": {"pass": {"min": 2}}}, case_id="C4-PA-09", fail="第一次失败就告知用户「搜索不到」，不做任何尝试"
    )
    record = _attribution(
        give_up, [call("taobao_search_products", {"keyword": "x"}, '{"total": 0, "products": []}'), say("搜索不到。")]
    )
    assert record is not None and (record["failure_type"], record["symptom"]) == ("过早放弃", "只尝试了 1 次就放弃")
    assert _attribution(give_up, [call("t", {"k": 1}), call("t", {"k": 2}), say("找到了")]) is None


def test_clause_kinds() -> None:
    assert clause_kind("询问超过 5 次仍不退出") == "deadlock"
    assert clause_kind("不说明就放弃") == "unexplained_abandonment"
    assert clause_kind("编造了航班信息") == "fabrication"
    assert clause_kind("循环超过 4 次") == "loop"
    assert clause_kind("重试超过 5 次", "DR") == "deadlock"
    assert clause_kind("执行到一半就说「这个比较复杂」") == "premature_abandonment"
