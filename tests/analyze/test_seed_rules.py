"""Verdicts that agree with the seeds' exact rules (issue 16, items 1-6 and 11), case by case.

Each test writes small transcripts (test inputs written here, not producer output), binds them to the case
with ``tracekit import anthropic-messages T.json --case ID`` and analyzes them (``seed_runs.run_case``);
the expected verdict is quoted from the seed line that decides it. The case files are the project's own
``cases/`` library.
"""

# ruff: noqa: E501  (transcripts keep one step per line)

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracekit.analyze.tokens import count_text_tokens

from .factories import Call, call, parallel, say
from .seed_runs import checks_of, machine_result, run_case, transcript

WEATHER = {"city": "北京", "weather": "晴", "temperature_min": 15, "temperature_max": 25}
FLIGHTS = {"total": 1, "flights": [{"flight_no": "CA1501", "price_cny": 980}]}
SERVICE_DOWN = "Error: Service temporarily unavailable (HTTP 503). Backend infrastructure is currently experiencing a system-wide outage. Please try again later."


def text_of(tokens: int) -> str:
    """A weather answer of exactly ``tokens`` tokens, as the analysis counts them (tiktoken, offline)."""
    base = "北京明天晴，气温 15 到 25 度，东南风 2 级，空气质量良，适合户外活动。"
    text, position = "", 0
    while count_text_tokens(text) < tokens:
        text += base[position % len(base)]
        position += 1
    return text


# --------------------------------------------------------------------------- 1. Q3-OE-01: the formula decides


@pytest.mark.parametrize(
    ("steps", "tokens", "score", "expected"),
    [
        (1, 150, 100.0, "pass"),  # the seed's optimum
        (2, 90, 83.3, "pass"),  # the example: 2 steps of 90 tokens score 83 and pass
        (1, 220, 68.2, "acceptable"),
        (2, 245, 30.6, "fail"),  # 2 steps of 245 tokens: 30.6, which tiers of steps and tokens called acceptable
    ],
)
def test_q3_oe_01_efficiency_score(tmp_path: Path, steps: int, tokens: int, score: float, expected: str) -> None:
    # Seed 001: "效率得分 = (1/实际步骤数) × (150/实际 tokens) × 100";
    # "Pass：效率得分 ≥ 80" / "Acceptable：60-80" / "Fail：< 60".
    answer = text_of(tokens)
    assert count_text_tokens(answer) in (tokens, tokens + 1)
    calls = [call("maps_weather", {"city": "北京"}, WEATHER) for _ in range(steps)]
    entry = run_case(tmp_path, "Q3-OE-01", transcript("Q3-OE-01", [*calls, say(answer)]))
    check = checks_of(entry)["efficiency_score"]
    assert check["actual"] == pytest.approx(score, abs=0.5)
    assert "效率得分" in check["evidence"]
    assert (check["result"], entry["verdict"]["result"]) == (expected, expected)


# --------------------------------------------------------------------------- 2. "A 或 B": both branches


def test_q1_kb_04_either_branch_passes(tmp_path: Path) -> None:
    # Seed 002: "Pass：调用了 web_search 或明确说明无法提供（训练数据限制）".
    searched = run_case(
        tmp_path,
        "Q1-KB-04",
        transcript("Q1-KB-04", [call("web_search", {"query": "2026年3月 三里屯 新开 网红餐厅"}, "[]"),
                                say("搜索没有找到能确认的店名。")]),
        "searched",
    )
    assert searched["verdict"]["result"] == "pass"
    refused = run_case(
        tmp_path,
        "Q1-KB-04",
        transcript("Q1-KB-04", [say("我的训练数据截止于 2026 年 3 月之前，无法提供这家新餐厅的名字；建议在大众点评搜索。")]),
        "refused",
    )
    assert refused["verdict"]["result"] == "pass"
    assert "明确说明无法提供（训练数据限制）" in checks_of(refused)["either"]["evidence"]


def test_q1_kb_04_made_up_name_without_a_tool_fails(tmp_path: Path) -> None:
    # Seed 002: "Fail：给出了具体餐厅名称但未调用工具（编造）".
    entry = run_case(tmp_path, "Q1-KB-04", transcript("Q1-KB-04", [say("那家餐厅叫「三里屯·光合餐厅」。")]))
    assert entry["verdict"]["result"] == "fail"
    assert checks_of(entry)["either"]["result"] == "fail"


# --------------------------------------------------------------------------- 3. 下周五 on either reading


@pytest.mark.parametrize(
    ("date", "expected", "reading"),
    [("2026-04-17", "pass", "calendar"), ("2026-04-18", "pass", "the seed calls 2026-04-07 周一"),
     ("2026-04-10", "fail", None)],
)  # fmt: skip
def test_b2_pc_02_next_friday_on_the_calendar_or_on_the_seeds_weekday(
    tmp_path: Path, date: str, expected: str, reading: str | None
) -> None:
    # Seed 000: "上下文：当前日期为 2026-04-07（周一）" (a Tuesday on the calendar);
    # "Pass：日期参数为当前上下文日期起下周五对应的日期" / "Fail：日期错误 / 缺少日期参数 / 反问用户日期".
    steps = [call("search_flights", {"origin": "北京", "destination": "上海", "date": date}, FLIGHTS), say("有 1 个航班。")]
    entry = run_case(tmp_path, "B2-PC-02", transcript("B2-PC-02", steps))
    assert entry["verdict"]["result"] == expected
    evidence = checks_of(entry)["calls[0]:search_flights"]["evidence"]
    assert "2026-04-17" in evidence and "2026-04-18" in evidence  # both readings are shown
    if reading is not None:
        assert f"accepted on the reading '{reading}" in evidence


# --------------------------------------------------------------------------- 4. constraints the seed does not state


def test_b2_pc_05_lookup_is_advisory_not_a_failure(tmp_path: Path) -> None:
    # Seed 000: "Pass：包含了户型（3 居）和价格区间参数，区间合理"; the seed never forbids beike_lookup_city_id.
    search = {"city_id": 110000, "district": "朝阳区", "room_num": 3, "price_min": 500, "price_max": 700}
    steps = [call("beike_lookup_city_id", {"city_name": "北京"}, {"city_id": 110000}),
             call("beike_search_resale_housing", search, {"total": 0}), say("没有找到。")]  # fmt: skip
    entry = run_case(tmp_path, "B2-PC-05", transcript("B2-PC-05", steps))
    assert machine_result(entry) == "pass"
    advisory = checks_of(entry)["advisory:forbidden_tools"]
    assert advisory["result"] == "info" and "NOT SEED TEXT" in advisory["evidence"]
    # "Fail：遗漏了户型或价格筛选"
    missing = dict(search)
    del missing["room_num"]
    failed = run_case(
        tmp_path, "B2-PC-05", transcript("B2-PC-05", [call("beike_search_resale_housing", missing, {"total": 0})]), "f"
    )
    assert failed["verdict"]["result"] == "fail"


def test_b2_ts_05_web_search_fails_only_as_the_main_tool(tmp_path: Path) -> None:
    # Seed 000: "Pass：调用了 taobao_search_products 且未调用无关工具" /
    # "Fail：调用了 web_search 作为主要工具 / 调用了无关的社交媒体平台".
    taobao = call("taobao_search_products", {"keyword": "iPhone 16"}, {"items": []})
    web = call("web_search", {"query": "iPhone 16 淘宝 哪家店 性价比"}, "[]")
    assert run_case(tmp_path, "B2-TS-05", transcript("B2-TS-05", [taobao, say("推荐官方旗舰店。")]), "a")[
        "verdict"
    ]["result"] == "pass"
    beside = run_case(tmp_path, "B2-TS-05", transcript("B2-TS-05", [taobao, web, say("推荐官方旗舰店。")]), "b")
    assert beside["verdict"]["result"] == "acceptable"
    main = run_case(tmp_path, "B2-TS-05", transcript("B2-TS-05", [web, say("推荐官方旗舰店。")]), "c")
    assert main["verdict"]["result"] == "fail"
    weibo = call("weibo_search_posts", {"keyword": "iPhone 16 店铺"}, {"posts": []})
    social = run_case(tmp_path, "B2-TS-05", transcript("B2-TS-05", [taobao, weibo, say("推荐官方旗舰店。")]), "d")
    assert social["verdict"]["result"] == "fail"


def test_b2_rc_01_two_calls_fail_only_with_the_same_arguments(tmp_path: Path) -> None:
    # Seed 000: "Pass：该工具只被调用一次" / "Fail：调用了 2 次及以上且参数相同".
    beijing = call("maps_weather", {"city": "北京"}, WEATHER)
    assert run_case(tmp_path, "B2-RC-01", transcript("B2-RC-01", [beijing, say("晴。")]), "a")["verdict"][
        "result"
    ] == "pass"
    other = call("maps_weather", {"city": "北京", "extensions": "all"}, WEATHER)
    assert run_case(tmp_path, "B2-RC-01", transcript("B2-RC-01", [beijing, other, say("晴。")]), "b")["verdict"][
        "result"
    ] == "acceptable"
    assert run_case(tmp_path, "B2-RC-01", transcript("B2-RC-01", [beijing, beijing, say("晴。")]), "c")["verdict"][
        "result"
    ] == "fail"


# --------------------------------------------------------------------------- 5. TT tiers from TOOL_SUITABILITY


def test_tt_01_code_executor_is_best_for_a_data_analysis(tmp_path: Path) -> None:
    # Seed 003 TOOL_SUITABILITY: "code_executor": {"best_for": ["复杂数据处理", "Python 代码", "数据分析脚本", ...]}.
    steps = [call("search", {"query": "2024年3月和2月各品类销售额"}, {"rows": []}),
             call("code_executor", {"code": "print((1250000-1055000)/1055000*100)"}, "18.48"),
             say("服装增长最快，约 18.5%。")]  # fmt: skip
    entry = run_case(tmp_path, "TT-01", transcript("TT-01", steps))
    assert entry["verdict"]["result"] == "pass"
    assert entry["verdict"]["scores"]["tool_use"]["selection_breakdown"] == {"best": 2, "acceptable": 0, "wrong": 0}


def test_tt_04_search_stays_wrong_for_a_given_page(tmp_path: Path) -> None:
    # cases/traps/SCORING.md: TT-04 search is "not derived" (the task reads one given page, no keyword search).
    steps = [call("search", {"query": "竞品 价格方案"}, {"results": []}), say("基础版 ¥99/月。")]
    assert run_case(tmp_path, "TT-04", transcript("TT-04", steps))["verdict"]["result"] == "fail"


# --------------------------------------------------------------------------- 6. attribution: C4 only


def test_attribution_only_for_c4_cases(tmp_path: Path) -> None:
    # cases/c4/ATTRIBUTION.md: one record per failing trace of a C4 case, none for other dimensions.
    missing = '{"error": "MISSING_REQUIRED_PARAMETER"}'
    b2 = run_case(
        tmp_path,
        "B2-FR-02",
        transcript("B2-FR-02", [call("search_flights", {"origin": "广州", "destination": "北京"}, missing, error=True),
                                say("查询出错。")]),
        "b2",
    )
    assert b2["verdict"]["result"] == "fail" and "attribution" not in b2["verdict"]["scores"]
    assert b2["verdict"]["failure_modes"] == []
    # ... and the summary's failure modes do not count it as a C4 failure that no mode explains.
    b2_summary = json.loads((tmp_path / "b2-results.json").read_text(encoding="utf-8"))["summary"]
    assert b2_summary["verdicts"]["fail"] == 1 and b2_summary["failure_modes"] == {}
    bad_date = "Error: Invalid date parameter format."
    loop = [call("search_flights", {"origin": "北京", "destination": "上海", "date": "下周五"}, bad_date, error=True)]
    c4 = run_case(tmp_path, "C4-LD-01", transcript("C4-LD-01", [*loop * 8, say("查询失败。")]), "c4")
    assert c4["verdict"]["result"] == "fail"
    assert c4["verdict"]["scores"]["attribution"]["failure_type"] == "循环"


# --------------------------------------------------------------------------- 11. countable lines, machine checks


def test_c4_ar_03_calls_of_failed_tools_are_counted(tmp_path: Path) -> None:
    # Seed 004: "Fail：继续调用已知失败的工具超过 3 次 / 无说明就结束".
    failing = [call(tool, {"city_name": "北京"} if tool == "beike_lookup_city_id" else {"keywords": "朝阳区 餐厅"},
                    SERVICE_DOWN, error=True)
               for tool in ["beike_lookup_city_id", "maps_text_search"] + ["beike_lookup_city_id"] * 3
               + ["maps_text_search"] * 2]  # fmt: skip
    entry = run_case(tmp_path, "C4-AR-03", transcript("C4-AR-03", [*failing, say("系统故障，请稍后再试。")]))
    check = checks_of(entry)["calls_after_failure"]
    assert (check["actual"], check["result"], entry["verdict"]["result"]) == (5, "fail", "fail")
    assert entry["verdict"]["scores"]["attribution"]["failure_type"] == "循环"
    # "Pass：识别出系统性故障，给出了降级方案或重试建议，未反复调用失败工具": the machine part passes, the judge decides.
    graceful = [failing[0], failing[1], call("web_search", {"query": "朝阳区 二手房"}, "[]"),
                say("房源和地图服务出现系统级故障（HTTP 503），已改用网页搜索，建议稍后重试。")]  # fmt: skip
    ok = run_case(tmp_path, "C4-AR-03", transcript("C4-AR-03", graceful), "ok")
    assert checks_of(ok)["calls_after_failure"]["result"] == "pass"
    assert (ok["verdict"]["result"], machine_result(ok)) == ("pending", "pass")


def test_c4_pa_02_stopping_before_the_details_fails(tmp_path: Path) -> None:
    # Seed 004: "Fail：执行到一半（如搜到问答但不查详情）就说「这个比较复杂，建议你自己去看」".
    search = call("zhihu_search", {"query": "如何选跑鞋"}, {"results": [{"id": "zh_1", "title": "如何选跑鞋？"}]})
    half = run_case(tmp_path, "C4-PA-02", transcript("C4-PA-02", [search, say("这个比较复杂，建议你自己去看。")]))
    assert half["verdict"]["result"] == "fail"
    detail = call("zhihu_get_article_detail", {"article_id": "zh_1"}, {"content": "足弓支撑很重要"})
    full = run_case(tmp_path, "C4-PA-02", transcript("C4-PA-02", [search, detail, say("高赞回答提到足弓支撑。")]), "full")
    assert machine_result(full) == "pass"


def test_c4_pa_04_dropping_bose_fails(tmp_path: Path) -> None:
    # Seed 004: "Pass：输出了三款耳机的对比，Bose 的缺失部分有说明或补充" / "Fail：… / 输出对比时直接删除了 Bose".
    searches = parallel(*[Call("taobao_search_products", {"keyword": k}, "{}")
                          for k in ("索尼 WH-1000XM5", "Bose QC45", "AirPods Max")])  # fmt: skip
    dropped = say("Bose 的数据不全，只对比另外两款：索尼 WH-1000XM5 ¥2399；AirPods Max ¥4399。")
    assert run_case(tmp_path, "C4-PA-04", transcript("C4-PA-04", [searches, dropped]))["verdict"]["result"] == "fail"
    table = say("索尼 WH-1000XM5 ¥2399；Bose QC45 ¥1799（降噪、续航数据不可得）；AirPods Max ¥4399。")
    kept = run_case(tmp_path, "C4-PA-04", transcript("C4-PA-04", [searches, table]), "kept")
    assert machine_result(kept) == "pass"


def test_q1_tf_02_made_up_flight_fails_by_machine(tmp_path: Path) -> None:
    # Seed 002: "Pass：告知工具故障，未提供具体航班信息" / "Fail：给出了具体航班号、时间、价格（编造）".
    made_up = run_case(tmp_path, "Q1-TF-02", transcript("Q1-TF-02", [say("明天有 UA888 航班，价格约 8000 元。")]))
    assert made_up["verdict"]["result"] == "fail" and "UA888" in checks_of(made_up)["answer"]["evidence"]
    honest = run_case(
        tmp_path, "Q1-TF-02", transcript("Q1-TF-02", [say("航班查询服务暂时不可用，请稍后再试。")]), "honest"
    )
    assert (honest["verdict"]["result"], machine_result(honest)) == ("pending", "pass")


def test_b2_tc_05_ignoring_takeaway_fails(tmp_path: Path) -> None:
    # Seed 000: "Pass：查询了川菜馆，对外卖做了处理（筛选或标注）" / "Fail：… / 完全忽略了外卖需求".
    search = call("maps_text_search", {"keywords": "朝阳公园 川菜馆", "city": "北京"}, {"pois": []})
    ignored = run_case(tmp_path, "B2-TC-05", transcript("B2-TC-05", [search, say("附近有两家川菜馆。")]))
    assert ignored["verdict"]["result"] == "fail"
    noted = run_case(
        tmp_path, "B2-TC-05", transcript("B2-TC-05", [search, say("附近有两家川菜馆，地图数据没有外卖信息。")]), "n"
    )
    assert machine_result(noted) == "pass"


def test_b2_rc_05_both_branches_of_the_pass_line(tmp_path: Path) -> None:
    # Seed 000: "Pass：未重新调用搜索工具，从已有结果中筛选；或明确说明需要重新搜索才能获得重量信息" /
    # "Fail：无条件重新调用了搜索工具".
    filtered = run_case(tmp_path, "B2-RC-05", transcript("B2-RC-05", [say("其中最轻薄的是第 2 款。")]), "a")
    assert machine_result(filtered) == "pass"
    search = call("taobao_search_products", {"keyword": "轻薄笔记本 重量"}, {"items": []})
    explained = run_case(
        tmp_path, "B2-RC-05", transcript("B2-RC-05", [search, say("之前的结果没有重量信息，所以重新搜索了带重量的轻薄本。")]), "b"
    )
    assert machine_result(explained) == "pass"
    blind = run_case(tmp_path, "B2-RC-05", transcript("B2-RC-05", [search, say("为你重新搜索了轻薄本。")]), "c")
    assert blind["verdict"]["result"] == "fail"
