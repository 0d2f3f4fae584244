"""Case checks and verdicts on small hand-made cases (written for these tests)."""

from __future__ import annotations

from typing import Any

import pytest

from tracekit.analyze import analyze_trace
from tracekit.analyze.binding import CaseRun, history_length
from tracekit.analyze.checks import Check, evaluate_expect
from tracekit.analyze.graph import build_graph
from tracekit.analyze.sequence_checks import order_holds
from tracekit.analyze.verdict import build_verdict, decide
from tracekit.cases import Case

from .factories import call, case_trace, say


def make_case(expect: dict[str, Any], **fields: Any) -> Case:
    data = {
        "id": "B2-TC-99",
        "dimension": "B2",
        "category": "TC",
        "title": "测试用例",
        "scoring": "auto",
        "seed": {"file": "test", "section": "test", "number": 1},
        "input": {"user": "帮我查一下"},
        "expect": expect,
        **fields,
    }
    return Case.model_validate(data)


def run_of(case: Case, steps: list[Any], **options: Any) -> CaseRun:
    trace = case_trace(case, steps, **options)
    history = history_length(case)
    return CaseRun(trace, case, build_graph(trace.calls(history)), history)


def checks(case: Case, steps: list[Any]) -> dict[str, Check]:
    return {check.name: check for check in evaluate_expect(run_of(case, steps))}


@pytest.mark.parametrize(
    ("mode", "sequence", "holds"),
    [
        ("strict", ["a", "b"], True),
        ("strict", ["a", "b", "c"], False),
        ("strict", ["b", "a"], False),
        ("in-order", ["a", "x", "b"], True),
        ("in-order", ["b", "a"], False),
        ("any-order", ["b", "a"], True),
        ("any-order", ["a"], False),
        ("subset", ["a"], True),
        ("subset", ["a", "c"], False),
        ("superset", ["c", "b", "a"], True),
        ("superset", ["a", "c"], False),
    ],
)
def test_order_modes(mode: str, sequence: list[str], holds: bool) -> None:
    assert order_holds(mode, sequence, ["a", "b"]) is holds


def test_history_is_context_only() -> None:
    history = [
        {"role": "user", "content": "查北京天气"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "h1", "name": "maps_weather", "input": {"city": "北京"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "h1", "content": "{}"}]},
        {"role": "assistant", "content": "晴"},
    ]
    case = make_case({"call_count": {"pass": {"max": 1}}}, input={"messages": history, "user": "那上海呢"})
    assert history_length(case) == 5
    found = checks(case, [call("maps_weather", {"city": "上海"})])
    assert (found["call_count"].result, found["call_count"].actual) == ("pass", 1)


def test_tiers_grade_pass_acceptable_fail() -> None:
    case = make_case({"call_count": {"pass": {"max": 1}, "acceptable": {"max": 2}}})
    steps = [call("a", {"n": i}) for i in range(3)]
    assert [checks(case, steps[:n])["call_count"].result for n in (1, 2, 3)] == ["pass", "acceptable", "fail"]


def test_required_call_reports_each_argument() -> None:
    case = make_case(
        {"calls": [{"tool": "search_flights", "args": {"origin": {"exact": "北京"}, "date": {"present": True}}}]}
    )
    bad = checks(case, [call("search_flights", {"origin": "上海"})])["calls[0]:search_flights"]
    assert bad.result == "fail" and "origin: no" in bad.evidence and "date: no" in bad.evidence
    good = checks(
        case, [call("search_flights", {"origin": "上海"}), call("search_flights", {"origin": "北京", "date": "x"})]
    )
    assert good["calls[0]:search_flights"].result == "pass" and good["calls[0]:search_flights"].calls == [1]
    never = checks(case, [say("好的")])["calls[0]:search_flights"]
    assert never.result == "fail" and "never called" in never.evidence


def test_forbidden_tools_calls_and_parameter_rules() -> None:
    case = make_case(
        {
            "forbidden_tools": ["web_search"],
            "forbidden_calls": [
                {"tool": "search", "args": {"query": {"regex": "客户"}}},
                {
                    "tool": "search",
                    "args": {"query": {"regex": "^(?!.*2024)"}},
                    "note": "参数语义规则（seed 003）：要有时间",
                },
            ],
        }
    )
    found = checks(case, [call("web_search", {"q": "x"}), call("search", {"query": "销售"})])
    assert found["forbidden_tools"].result == "fail"
    assert found["forbidden_calls[0]:search"].result == "pass"
    assert found["forbidden_calls[1]:search"].result == "acceptable"  # a broken parameter rule


def test_ask_user_both_ways() -> None:
    should_ask = make_case({"ask_user": True, "no_tool_call": True})
    assert checks(should_ask, [say("请问您从哪里出发？")])["ask_user"].result == "pass"
    assumed = checks(should_ask, [call("search_flights", {"origin": "北京"}), say("请问还需要什么？")])
    assert assumed["ask_user"].result == "fail" and assumed["no_tool_call"].result == "fail"
    should_act = make_case({"ask_user": False})
    assert checks(should_act, [say("请问哪天出发？")])["ask_user"].result == "fail"
    assert checks(should_act, [call("search_flights", {}), say("查到了")])["ask_user"].result == "pass"


def test_data_flow_needs_the_value_from_an_earlier_success() -> None:
    case = make_case(
        {"data_flow": [{"from_tool": "lookup", "from_path": "city_id", "to_tool": "search", "to_arg": "city_id"}]}
    )
    name = "data_flow:lookup.city_id->search.city_id"
    good = [call("lookup", {"name": "北京"}, {"city_id": 110000}), call("search", {"city_id": 110000})]
    assert checks(case, good)[name].result == "pass"
    assert (
        checks(case, [call("lookup", {}, {"city_id": 110000}), call("search", {"city_id": 1})])[name].result == "fail"
    )
    assert checks(case, [call("search", {"city_id": 110000})])[name].result == "fail"


def test_retries_loop_repeats_and_asks() -> None:
    case = make_case({"max_retries": 1, "loop_repeats": {"pass": {"max": 2}}, "asks": {"pass": {"max": 1}}})
    error = "Error: timeout"
    steps = [
        call("a", {"x": 1}, error, error=True),
        call("a", {"x": 2}, error, error=True),
        call("a", {"x": 3}, "{}"),
        call("b", {"q": 1}),
        call("c", {"q": 1}),
        call("b", {"q": 2}),
        call("c", {"q": 2}),
        call("b", {"q": 3}),
        call("c", {"q": 3}),
        say("要继续吗？"),
    ]
    found = checks(case, steps)
    assert (found["max_retries"].result, found["max_retries"].actual) == ("fail", 2)
    assert (found["loop_repeats"].result, found["loop_repeats"].actual) == ("fail", 3)
    assert (found["asks"].result, found["asks"].actual) == ("pass", 1)


def test_recovery_untested_is_its_own_state_and_explain_needs_the_judge() -> None:
    case = make_case({"recovery": {"failing_tool": "search", "accept": ["retry", "explain"]}})
    untested = checks(case, [call("search", {"q": 1}, "{}")])["recovery"]
    assert untested.result == "untested" and "recovery untested" in untested.evidence
    pending = checks(case, [call("search", {"q": 1}, "Error: 503", error=True), say("服务暂时不可用，请稍后再试。")])
    assert pending["recovery"].result == "pending"
    retried = checks(case, [call("search", {"q": 1}, "Error: 503", error=True), call("search", {"q": 2}, "{}")])
    assert retried["recovery"].result == "pass"
    strict = make_case({"recovery": {"failing_tool": "search", "accept": ["ask_user"]}})
    assert checks(strict, [call("search", {"q": 1}, "Error", error=True), say("失败了。")])["recovery"].result == "fail"


def test_injected_empty_result_counts_as_the_failure_to_recover_from() -> None:
    empty = '{"total": 0, "items": []}'
    case = make_case(
        {"recovery": {"failing_tool": "taobao_search_products", "accept": ["fallback"]}},
        intercepts=[
            {
                "type": "tool_intercept",
                "intercept_tool": "taobao_search_products",
                "inject_tool_result": {"content": empty, "is_error": False},
            }
        ],
    )
    found = checks(
        case, [call("taobao_search_products", {"keyword": "x"}, empty), call("web_search", {"query": "x"}, "{}")]
    )
    assert found["recovery"].result == "pass" and "fallback" in found["recovery"].evidence


def test_answer_checks_and_output_tokens_from_usage_or_tiktoken() -> None:
    case = make_case(
        {"answer": {"contains_all": ["299"], "not_contains": ["约 300"]}, "output_tokens": {"pass": {"max": 10}}}
    )
    found = checks(case, [say("价格是 299 元。")])
    assert found["answer"].result == "pass"
    assert found["output_tokens"].result == "pass" and "tiktoken" in found["output_tokens"].evidence
    assert checks(case, [say("约 300 元")])["answer"].result == "fail"
    long_run = run_of(case, [say("价格是 299 元。")], answer_usage=50)
    tokens = {c.name: c for c in evaluate_expect(long_run)}["output_tokens"]
    assert (tokens.result, tokens.actual) == ("fail", 50) and "usage" in tokens.evidence


def test_decide_and_the_judge_hook() -> None:
    passed, failed = Check("a", "pass", ""), Check("b", "fail", "")
    assert decide([passed], needs_judge=False, judged=None) == "pass"
    assert decide([passed], needs_judge=True, judged=None) == "pending"
    assert decide([passed, failed], needs_judge=True, judged=None) == "fail"
    assert decide([passed], needs_judge=True, judged=[Check("judge", "acceptable", "")]) == "acceptable"
    assert decide([Check("r", "pending", "")], needs_judge=False, judged=None) == "pending"
    assert decide([Check("u", "untested", ""), Check("i", "info", "")], needs_judge=False, judged=None) == "pass"
    errored = [Check("judge", "error", "the judge's answer holds no JSON object")]
    assert decide([passed], needs_judge=True, judged=errored) == "pending"  # an error never passes
    assert decide([passed, failed], needs_judge=True, judged=errored) == "fail"  # a machine failure stands

    case = make_case({"calls": [{"tool": "a"}]}, scoring="auto+judge", judge={"rubric": "看回答"})
    run = run_of(case, [call("a", {}), say("好")])
    assert build_verdict(run, [])["result"] == "pending"
    seen: list[int] = []

    def judge(run: CaseRun, machine: list[Check]) -> list[Check]:
        seen.append(len(machine))
        return [Check("judge", "fail", "编造了数据", failure_kind="fabrication")]

    verdict = build_verdict(run, [], judge)
    assert seen == [1] and verdict["result"] == "fail" and verdict["judge"] == "judged"  # the hook names no source
    assert verdict.parts is not None
    assert verdict.parts.to_plain() == {"auto": "pass", "judge": "fail", "judge_model": None, "judge_template": None}
    assert verdict.scores.attribution is None  # seed 004's attribution is for C4 cases only
    c4 = make_case({"calls": [{"tool": "a"}]}, id="C4-AR-99", dimension="C4", category="AR", scoring="auto+judge",
                   judge={"rubric": "看回答"})  # fmt: skip
    c4_verdict = build_verdict(run_of(c4, [call("a", {}), say("好")]), [], judge)
    assert c4_verdict["scores"]["attribution"]["failure_kind"] == "fabrication"
    error = build_verdict(run, [], lambda run, machine: [Check("judge", "error", "unparseable")])
    assert (error["result"], error["judge"], error["parts"]["judge"]) == ("pending", "error", "error")


def test_unknown_case_id_is_a_problem_not_a_crash(tmp_path: Any) -> None:
    from tracekit.cases.loader import CaseLibrary

    case = make_case({})
    trace = case_trace(case, [say("好")])
    library = CaseLibrary(root=tmp_path)
    entry = analyze_trace(trace, library=library)
    assert entry["verdict"] is None and "not in the case library" in entry["problems"][0]
