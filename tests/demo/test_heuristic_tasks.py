"""The demo judge's task rules (tracekit_demo.judge.heuristic_tasks) on traces built in code, both ways each.

Every trace is the case's own input (history as the case file has it) plus agent turns written here; the
judge is ``scripted:judge`` served in-process (no model, no network).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tracekit_demo.clients import JUDGE_MODEL
from tracekit_demo.judge.heuristic import TAG

from tracekit.judge import CaseJudge, JudgeConfig

from .demo_support import answer, case, run_trace, tool_turn

WEB = json.dumps({"results": [{"title": "同类商品价格", "snippet": "常见价位 199-399 元"}]}, ensure_ascii=False)
POIS = json.dumps({"count": 1, "pois": [{"name": "川菜馆（示例）", "address": "朝阳公园南路1号"}]}, ensure_ascii=False)
ANSWERS = json.dumps({"results": [
    {"id": "zh_1", "question": "冰岛自驾要注意什么？", "upvotes": 900},
    {"id": "zh_2", "question": "冰岛几月去最好？", "upvotes": 100},
]}, ensure_ascii=False)  # fmt: skip
ICELAND = "环岛一号公路约 1300 公里，建议 8-10 天，冬季只走南岸。"
DETAIL = json.dumps({"id": "zh_1", "content": ICELAND}, ensure_ascii=False)
LAPTOPS = json.dumps({"items": [{"product_id": "tb_1", "title": "极速游戏本 X1", "price": 5999}]}, ensure_ascii=False)
PLAN = "第 1 天清水寺，第 2 天金阁寺，第 3 天岚山，第 4 天伏见稻荷"
STAY = "住宿选京都站附近的酒店。"
ROUTE = tool_turn("t1", "compute_google_maps_routes", {"origin": "京都站", "destination": "金阁寺"}, "{}")
CONFLICT = "500 元买不到能玩这款游戏的笔记本，因为最低要 RTX 3060，对应 5000 元以上；可以提高预算或用云游戏。"


def turn_with_text(call_id: str, text: str, name: str, arguments: dict[str, Any], result: str) -> list[dict[str, Any]]:
    """An assistant turn saying something before its tool call, and the call's result."""
    use = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
    return [
        {"role": "assistant", "content": [{"type": "text", "text": text}, use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}]},
    ]


def judged(tmp_path: Path, case_id: str, agent: list[dict[str, Any]]) -> dict[str, Any]:
    trace = run_trace(tmp_path, case(case_id), agent, f"{case_id}-{abs(hash(json.dumps(agent)))}")
    with CaseJudge(JudgeConfig(model=JUDGE_MODEL, store=tmp_path / "store")) as judge:
        check = judge.judge(case(case_id), trace).to_dict()
    assert all(reason.endswith(TAG) for reason in check["judge"]["reasons"])
    assert all(quote["found_in"] for quote in check["judge"]["quotes"])  # every quote is from the evidence
    return check


CASES: list[tuple[str, list[dict[str, Any]], str, str]] = [
    # image_reading: the price the rubric says the tag shows (¥299), read and searched with
    ("B2-MM-02", [*tool_turn("t1", "web_search", {"query": "标价 299 元 是否正常"}, WEB),
                  answer("标签上的价格是 ¥299，属于同类商品的常见价位，价格正常。")], "pass", "用于后续搜索"),
    ("B2-MM-02", [answer("这个价格看起来挺正常的。")], "fail", "主观判断"),
    ("B2-MM-02", [*tool_turn("t1", "web_search", {"query": "标价 399 元 是否正常"}, WEB),
                  answer("标签上的价格是 ¥399，价格偏高。")], "fail", "读取错误"),
    # reuse_results: the 8 laptops of the history carry their weight
    ("B2-RC-05", [answer("从刚才的结果里筛选，最轻的是 ThinkPad X1 Carbon Gen 11（1.12kg）。")], "pass", "已有结果"),
    ("B2-RC-05", [*tool_turn("t1", "taobao_search_products", {"keyword": "轻薄本"}, LAPTOPS),
                  answer("为你重新搜索了轻薄本。")], "fail", "无条件重新调用"),
    ("B2-RC-05", [*turn_with_text("t1", "之前的结果里没有厚度信息，需要重新搜索。", "taobao_search_products",
                                  {"keyword": "轻薄本 厚度"}, LAPTOPS),
                  answer("按厚度筛选，推荐极速游戏本 X1。")], "pass", "缺少所需信息"),
    # top_pick: search, the most upvoted answer's detail, its content in the answer
    ("B2-TC-04", [*tool_turn("t1", "zhihu_search", {"keyword": "冰岛旅行攻略"}, ANSWERS),
                  *tool_turn("t2", "zhihu_get_article_detail", {"article_id": "zh_1"}, DETAIL),
                  answer(f"高赞回答（900 赞）：{ICELAND}")], "pass", "最高"),
    ("B2-TC-04", [*tool_turn("t1", "zhihu_search", {"keyword": "冰岛旅行攻略"}, ANSWERS),
                  *tool_turn("t2", "zhihu_get_article_detail", {"article_id": "zh_2"}, DETAIL),
                  answer("这篇回答说冬季只走南岸。")], "fail", "不是upvotes最高"),
    ("B2-TC-04", [*tool_turn("t1", "zhihu_search", {"keyword": "冰岛旅行攻略"}, ANSWERS),
                  answer("知乎上有很多冰岛攻略，可以去看看。")], "fail", "跳过了查详情"),
    # secondary_request: "如果有外卖就更好了"
    ("B2-TC-05", [*tool_turn("t1", "maps_text_search", {"keywords": "朝阳公园 川菜馆"}, POIS),
                  answer("附近有川菜馆（示例）。地图数据里没有外卖信息，可以在外卖平台搜店名确认。")], "pass", "外卖"),
    ("B2-TC-05", [*tool_turn("t1", "maps_text_search", {"keywords": "朝阳公园 川菜馆"}, POIS),
                  answer("附近有川菜馆（示例）。")], "fail", "忽略了「外卖」"),
    # referenced_item: "第一套" is 望京花园小区 in the history's listings
    ("B2-TC-07", [*tool_turn("t1", "maps_text_search", {"keywords": "望京花园小区 餐厅"}, POIS),
                  answer("望京花园小区周边有川菜馆（示例）。")], "pass", "第 1 项"),
    ("B2-TC-07", [*tool_turn("t1", "maps_text_search", {"keywords": "三里屯 餐厅"}, POIS),
                  answer("三里屯有川菜馆（示例）。")], "fail", "不对应"),
    ("B2-TC-07", [*tool_turn("t1", "beike_search_resale_housing", {"city_id": 110000, "district": "朝阳区"}, "{}"),
                  answer("朝阳区有很多餐厅。")], "fail", "重新调用了 beike_search_resale_housing"),
    # document_rules: the skill says the trip's total length must stay the same
    ("Q1-RF-02", [answer("同时搜索前后一天的航班，但行程总时长必须保持不变，不能缩短或延长。")], "pass", "行程总时长"),
    ("Q1-RF-02", [answer("日期弹性时可以缩短行程来降低成本。")], "fail", "相悖"),
    ("Q1-RF-02", [answer("日期弹性时同时搜索前后一天的航班，推荐 2-3 个。")], "acceptable", "没有提到"),
    # trip_plan: the four sights, lodging, and routes looked up before the schedule
    ("Q3-OE-03", [*tool_turn("t1", "search_flights", {"origin": "上海", "destination": "大阪"}, "{}"),
                  answer(f"{PLAN}；{STAY}")], "fail", "地图或路线"),
    ("Q3-OE-03", [*ROUTE, answer(f"{PLAN}；{STAY}")], "pass", "路线"),
    ("Q3-OE-03", [*ROUTE, answer(f"{PLAN[:PLAN.index('，第 4 天')]}；{STAY}")], "fail", "伏见稻荷"),
    # abandonment family, over budget: the user's 500 元 against the tool's 5999
    ("C4-AR-02", [*tool_turn("t1", "taobao_search_products", {"keyword": "500元 游戏笔记本"}, LAPTOPS),
                  answer("推荐极速游戏本 X1，500 元以内也能流畅运行。")], "fail", "超出了用户 500 元的预算"),
    ("C4-AR-02", [answer(CONFLICT)], "pass", "替代路径"),
]  # fmt: skip


@pytest.mark.parametrize(("case_id", "agent", "expected", "reason"), CASES)
def test_task_rules(tmp_path: Path, case_id: str, agent: list[dict[str, Any]], expected: str, reason: str) -> None:
    check = judged(tmp_path, case_id, agent)

    assert check["result"] == expected, check
    assert reason in check["judge"]["reasons"][0], check["judge"]["reasons"]
