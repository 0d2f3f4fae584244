"""A case's intercepts applied by the proxy: the model sees the injected result while the agent's own
tool succeeded; the trace records each injection once; replaying with the same case is a full hit.

The intercept configs are the seeds' JSON (004_24efcd20298eeeaa.txt: C4-LD-01, C4-PA-01), trimmed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import openai

from tracekit.testing import ToolUse, by_turn, text_reply, tool_use_reply

from .helpers import of_kind, recording, replaying, trace_records

LD01 = {
    "type": "tool_intercept",
    "intercept_tool": "search_flights",
    "inject_tool_result": {
        "is_error": True,
        "content": "Error: Invalid date parameter format. Expected ISO 8601 format (YYYY-MM-DD), got unrecognized "
        "date string. Please provide an explicit date.",
    },
}
PA01 = {
    "type": "tool_mock",
    "mocked_calls": [
        {"tool": "taobao_search_products", "params_match": {"keyword": "羽毛球鞋 李宁"},
         "inject_result": {"is_error": False, "content": '{"total": 0, "products": [], "message": "暂时无法获取"}'}},
        {"tool": "taobao_search_products", "params_match": {"keyword": "李宁羽毛球鞋"},
         "inject_result": {"is_error": False, "content": '{"total": 12, "products": [{"id": "tb_001"}]}'}},
    ],
}  # fmt: skip
AGENT_RESULT = '{"flights": [{"flight_no": "MU5101", "price": 1280}]}'

FLIGHT_SCRIPT = by_turn([
    tool_use_reply(ToolUse("search_flights", {"origin": "北京", "destination": "上海", "date": "下周五"})),
    tool_use_reply(ToolUse("search_flights", {"origin": "北京", "destination": "上海", "date": "2026-04-17"})),
    text_reply("查询失败，请告诉我具体日期。"),
])  # fmt: skip


def flight_agent(client: anthropic.Anthropic) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """An agent whose search_flights tool always succeeds; returns (responses, the agent's messages)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "查一下下周五北京到上海的机票"}]
    responses = []
    while True:
        message = client.messages.create(model="claude-test", max_tokens=256, messages=messages)
        responses.append(message.model_dump())
        if message.stop_reason != "tool_use":
            return responses, messages
        messages.append({"role": "assistant", "content": message.content})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": block.id, "content": AGENT_RESULT}
            for block in message.content if block.type == "tool_use"]})  # fmt: skip


def test_the_model_sees_the_injected_failure_and_the_trace_shows_it(tmp_path: Path) -> None:
    with recording(FLIGHT_SCRIPT, tmp_path, case=LD01) as (upstream, proxy):
        responses, agent_messages = flight_agent(anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0))
    # The agent's own tool returned success ...
    agent_results = [m["content"][0] for m in agent_messages if m["role"] == "user" and isinstance(m["content"], list)]
    assert [(r["content"], r.get("is_error")) for r in agent_results] == [(AGENT_RESULT, None)] * 2
    # ... while the model saw the injected error, in every request that carried it.
    seen = [
        [(b["content"], b.get("is_error")) for m in r.body["messages"] if isinstance(m["content"], list)
         for b in m["content"] if b.get("type") == "tool_result"]
        for r in upstream.requests
    ]  # fmt: skip
    injected = (LD01["inject_tool_result"]["content"], True)
    assert seen == [[], [injected], [injected, injected]]
    (records,) = trace_records(tmp_path)
    results = of_kind(records, "tool_result")
    assert [(r["content"], r["is_error"], r["injected"]) for r in results] == [(*injected, True)] * 2
    intercepts = of_kind(records, "intercept")
    assert [(i["mode"], i["tool"], i["original"], i["injected"], i["call_index"]) for i in intercepts] == [
        ("tool_intercept", "search_flights", AGENT_RESULT, injected[0], 0),
        ("tool_intercept", "search_flights", AGENT_RESULT, injected[0], 1),
    ]
    assert [i["model_call"] for i in intercepts] == [1, 2]

    with replaying(tmp_path, case=LD01) as proxy:
        replayed, _ = flight_agent(anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0))
        assert proxy.proxy.misses == []
    assert replayed == responses


def test_replay_without_the_case_misses_and_says_where(tmp_path: Path) -> None:
    with recording(FLIGHT_SCRIPT, tmp_path, case=LD01) as (_, proxy):
        flight_agent(anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0))
    with replaying(tmp_path) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=2)
        try:
            flight_agent(client)
        except anthropic.NotFoundError as exc:
            message = exc.body["error"]["message"]  # type: ignore[call-overload,index]
            assert exc.response.headers["x-should-retry"] == "false"
        else:
            raise AssertionError("the second request must miss: the agent's result is not the injected one")
    assert len(proxy.proxy.misses) == 1, "x-should-retry: false stops the SDK from retrying a miss"
    assert "model_call 1" in message
    assert "root['messages'][2]['content'][0]['content']" in message
    assert "MU5101" in message


def test_tool_mock_params_match_through_openai(tmp_path: Path) -> None:
    script = by_turn([
        tool_use_reply(ToolUse("taobao_search_products", {"keyword": "羽毛球鞋 李宁"})),
        tool_use_reply(ToolUse("taobao_search_products", {"keyword": "李宁羽毛球鞋"})),
        text_reply("找到 12 件商品。"),
    ])  # fmt: skip
    with recording(script, tmp_path, case=PA01) as (upstream, proxy):
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "查一下淘宝上的「羽毛球鞋 李宁」"}]
        while True:
            message = client.chat.completions.create(model="gpt-test", messages=messages).choices[0].message
            if not message.tool_calls:
                break
            messages.append(message)
            messages += [{"role": "tool", "tool_call_id": call.id, "content": "agent's real result"}
                         for call in message.tool_calls]  # fmt: skip
    final = upstream.requests[-1].body["messages"]
    assert [json.loads(m["content"])["total"] for m in final if m["role"] == "tool"] == [0, 12]
    (records,) = trace_records(tmp_path)
    assert [i["mode"] for i in of_kind(records, "intercept")] == ["tool_mock", "tool_mock"]
    assert all(r["injected"] for r in of_kind(records, "tool_result"))


def test_intercepts_reach_thread_continuations_that_send_only_new_messages(tmp_path: Path) -> None:
    from anthropic import beta_tool

    @beta_tool
    def search_flights(origin: str, destination: str, date: str) -> str:
        """Search flights."""
        return AGENT_RESULT

    def run(url: str) -> list[dict[str, Any]]:
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test", max_tokens=256, tools=[search_flights],
            messages=[{"role": "user", "content": "查一下下周五北京到上海的机票"}],
        )  # fmt: skip
        return [message.model_dump() for message in runner]

    with recording(FLIGHT_SCRIPT, tmp_path, case=LD01) as (upstream, proxy):
        recorded = run(proxy.url)
    continuations = [r for r in upstream.requests if (r.thread or {}).get("type") == "continue"]
    assert len(continuations) == 2
    for request in continuations:
        (message,) = request.body["messages"]  # only the new tool result was sent ...
        assert message["content"][0]["content"] == LD01["inject_tool_result"]["content"]  # ... rewritten
        assert message["content"][0]["is_error"] is True
    (records,) = trace_records(tmp_path)
    assert [i["call_index"] for i in of_kind(records, "intercept")] == [0, 1]
    with replaying(tmp_path, case=LD01) as proxy:
        assert run(proxy.url) == recorded
        assert proxy.proxy.misses == []


def test_a_case_file_from_the_library_drives_the_intercepts(tmp_path: Path) -> None:
    case_file = Path(__file__).resolve().parents[2] / "cases" / "c4" / "C4-AR-03.yaml"
    if not case_file.exists():
        import pytest

        pytest.skip("case library not present")
    from tracekit.intercepts import load_intercept_config

    config = load_intercept_config(case_file)
    script = by_turn([tool_use_reply(ToolUse("beike_lookup_city_id", {"city": "北京"})), text_reply("服务不可用。")])
    with recording(script, tmp_path, case=config) as (upstream, proxy):
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        first = client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "查二手房"}])
        client.messages.create(model="m", max_tokens=10, messages=[
            {"role": "user", "content": "查二手房"}, {"role": "assistant", "content": first.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[0].id,
                                          "content": '{"city_id": "110000"}'}]}])  # fmt: skip
    seen = upstream.requests[1].body["messages"][2]["content"][0]
    assert seen["is_error"] is True and "HTTP 503" in seen["content"]
    (records,) = trace_records(tmp_path)
    assert records[0]["case_id"] == "C4-AR-03"
