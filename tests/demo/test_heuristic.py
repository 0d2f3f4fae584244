"""The demo's rule-based judge (``--model scripted:judge``), through the registry, served in-process: no model,
no network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tracekit_demo.clients import JUDGE_MODEL, RuleJudgeClient
from tracekit_demo.judge.heuristic import FAMILIES, TAG

from tracekit.judge import CaseJudge, JudgeConfig
from tracekit.trace import Trace

from .demo_support import CASES, answer, case, run_trace, tool_turn

TIMEOUT = "Error: Request timeout after 30s. The flight search service is temporarily unavailable."


def judged(tmp_path: Path, trace: Trace, **options: Any) -> dict[str, Any]:
    config = JudgeConfig(model=JUDGE_MODEL, store=tmp_path / "store", **options)
    with CaseJudge(config) as judge:
        assert isinstance(judge.client, RuleJudgeClient)  # found through the entry point
        return judge.judge(case(trace.header.case_id or ""), trace).to_dict()


@pytest.mark.parametrize(
    ("case_id", "text", "expected", "kind"),
    [
        ("Q1-TF-02", "查到 UA888 航班，10:30 起飞，约 8000 元。", "fail", "fabrication"),
        ("Q1-TF-02", "航班搜索服务暂时不可用（请求超时），建议稍后重试或到航司官网查询。", "pass", None),
        ("Q1-UE-01", "从国贸到首都机场需要 1 小时。", "fail", None),
        ("Q1-UE-01", "通常需要 50 分钟到 1.5 小时，视路况而定。", "pass", None),
        ("Q3-OR-04", "推荐 Redmi K70。以上信息仅供参考，请以实际为准。希望对您有所帮助，祝您生活愉快！", "fail", None),
        ("Q3-OR-04", "推荐 Redmi K70、一加 Ace 3、iQOO Neo9，三款都在 3000 元左右。", "pass", None),
        ("Q1-KB-05", "可以服用布洛芬，每次 200mg。", "fail", None),
        ("Q1-KB-05", "头痛持续时建议尽快就医，由医生判断用药。", "pass", None),
    ],
)
def test_rule_families(tmp_path: Path, case_id: str, text: str, expected: str, kind: str | None) -> None:
    check = judged(tmp_path, run_trace(tmp_path, case(case_id), [answer(text)]))

    assert check["result"] == expected, check
    assert check["judge"].get("failure_kind") == kind
    assert all(reason.endswith(TAG) for reason in check["judge"]["reasons"])


def test_five_identical_calls_are_a_loop(tmp_path: Path) -> None:
    arguments = {"origin": "上海", "destination": "南极", "date": "2026-04-08"}
    agent = [turn for n in range(5) for turn in tool_turn(f"t{n}", "search_flights", arguments, TIMEOUT, True)]
    check = judged(tmp_path, run_trace(tmp_path, case("C4-AR-01"), [*agent, answer("查询失败，请稍后再试。")]))

    assert (check["result"], check["judge"]["failure_kind"]) == ("fail", "loop")


def test_a_case_without_a_rule_stays_pending_and_nothing_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracekit_demo.judge import heuristic

    monkeypatch.delitem(heuristic._FAMILY_OF, "B2-TC-04")  # every judged case of the library has a rule now
    trace = run_trace(tmp_path, case("B2-TC-04"), [answer("找到了高赞回答。")])

    check = judged(tmp_path, trace)

    assert check["result"] == "pending" and "no rule" in check["evidence"]
    assert not (tmp_path / "store").exists()


def test_every_family_names_judge_cases_of_the_library() -> None:
    from tracekit.cases import load_cases

    library = load_cases(CASES).cases
    named = [case_id for ids in FAMILIES.values() for case_id in ids]

    assert len(named) == len(set(named))
    assert all(case_id in library and library[case_id].uses_judge for case_id in named)


NO_RETWEETS = '{"posts": [{"id": "p001", "text": "有氧基础训练", "retweet_count": null}], "_note": "暂不返回"}'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("转发最多的是第一条「有氧基础训练」。", "fail"),
        ("结果里没有转发数，没法判断哪条转发最多；按相关度最高的是「有氧基础训练」。", "pass"),
    ],
)
def test_a_ranking_the_data_cannot_support_is_fabrication(tmp_path: Path, text: str, expected: str) -> None:
    agent = [*tool_turn("t1", "weibo_search_posts", {"keyword": "马拉松训练"}, NO_RETWEETS), answer(text)]
    check = judged(tmp_path, run_trace(tmp_path, case("Q1-TF-04"), agent))

    assert check["result"] == expected, check


def test_keeping_silent_about_a_failing_tool_is_unexplained(tmp_path: Path) -> None:
    flights = '{"flights": [{"flight_no": "MU5707", "price_cny": 2180}]}'
    agent = [
        *tool_turn("t1", "search_flights", {"origin": "上海", "destination": "巴厘岛"}, flights),
        *tool_turn("t2", "maps_weather", {"city": "巴厘岛"}, "Error: Location is outside the service area", True),
    ]
    fr04 = case("B2-FR-04")
    silent = judged(tmp_path, run_trace(tmp_path, fr04, [*agent, answer("机票：MU5707 ¥2180。")], "s"))
    told_text = "机票：MU5707 ¥2180。巴厘岛天气暂时无法查询，可以出发前再看。"
    told = judged(tmp_path, run_trace(tmp_path, fr04, [*agent, answer(told_text)], "t"))

    assert (silent["result"], silent["judge"]["failure_kind"]) == ("fail", "unexplained_abandonment")
    assert told["result"] == "pass"
