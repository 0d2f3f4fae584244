"""The reference agent on the official SDKs, through the in-process proxy, against the scripted fake upstream.

The fake upstream plays the model with a fixed script; the proxy applies the case's intercepts. The tests
check what the *model* received (the fake's requests) and what the trace recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from tracekit.cases.loader import CaseLibrary
from tracekit.cases.model import Case
from tracekit.intercepts import config_from
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.runner.agent import AgentLimits, run_agent
from tracekit.runner.conversation import agent_start
from tracekit.runner.mock_tools import MockToolExecutor
from tracekit.runner.simulated_user import ScriptedUser
from tracekit.runner.turn_clients import AnthropicTurnClient, OpenAITurnClient, TurnClient
from tracekit.testing import FakeUpstream, ScriptLike, ToolUse, by_turn, error_reply, text_reply, tool_use_reply

INJECTED_DATE_ERROR = "Invalid date parameter format"


@contextmanager
def through_proxy(script: ScriptLike, case: Case, out: Path) -> Iterator[tuple[FakeUpstream, RunningProxy]]:
    with FakeUpstream(script) as upstream:
        config = ProxyConfig(upstream=upstream.url, out_dir=out, intercepts=config_from(case), redactor=Redactor())
        with RunningProxy(config) as proxy:
            yield upstream, proxy


def start_for(library: CaseLibrary, case_id: str) -> tuple[Case, MockToolExecutor, Any]:
    case = library.get(case_id)
    tools = MockToolExecutor.for_case(library.catalog, case.context.tools)
    return case, tools, agent_start(case, case.skills.A, tools.tool_params(), library.skills, library.root)


def records(folder: Path) -> list[dict[str, Any]]:
    (path,) = folder.glob("*.jsonl")
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


FLIGHT_CALL = ToolUse("search_flights", {"origin": "北京", "destination": "上海", "date": "2026-04-17"})


def test_anthropic_sdk_the_model_sees_the_injected_failure(library: CaseLibrary, tmp_path: Path) -> None:
    case, tools, start = start_for(library, "C4-LD-01")
    script = by_turn([tool_use_reply(FLIGHT_CALL), text_reply("日期格式有问题，请告诉我具体日期。")])
    with through_proxy(script, case, tmp_path) as (upstream, proxy):
        client = AnthropicTurnClient("claude-test", proxy.url, "sk-ant-test-key-000000", session="C4-LD-01__A__r0")
        outcome = run_agent(start, client, tools)
    assert (outcome.stop, outcome.turns, outcome.tool_calls) == ("end_turn", 2, 1)
    # The agent ran the catalog mock (a flight list); the model saw the case's injected error instead.
    assert outcome.messages is not None
    agent_result = outcome.messages[2]["content"][0]
    assert not agent_result.get("is_error") and "flights" in agent_result["content"]
    seen = upstream.requests[1].body["messages"][2]["content"][0]
    assert seen["is_error"] is True and INJECTED_DATE_ERROR in seen["content"]
    assert "x-tracekit-session" not in upstream.requests[0].headers
    trace = records(tmp_path)
    assert trace[0]["session"] == "C4-LD-01__A__r0" and trace[0]["case_id"] == "C4-LD-01"
    (intercept,) = [r for r in trace if r["kind"] == "intercept"]
    assert intercept["tool"] == "search_flights" and INJECTED_DATE_ERROR in intercept["injected"]
    assert "sk-ant-test-key" not in b"".join(path.read_bytes() for path in tmp_path.glob("*.jsonl")).decode()


def test_openai_sdk_same_loop_same_injection(library: CaseLibrary, tmp_path: Path) -> None:
    case, tools, start = start_for(library, "C4-LD-01")
    script = by_turn([tool_use_reply(FLIGHT_CALL), text_reply("请确认日期。")])
    with through_proxy(script, case, tmp_path) as (upstream, proxy):
        client: TurnClient = OpenAITurnClient("gpt-test", proxy.openai_url, "sk-test", session="s1")
        outcome = run_agent(start, client, tools)
    assert (outcome.stop, outcome.tool_calls) == ("end_turn", 1)
    requests = upstream.requests_for("openai")
    assert requests[0].body["messages"][0]["role"] == "system"
    assert requests[0].body["tools"][0]["function"]["name"] == "search_flights"
    tool_message = requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool" and INJECTED_DATE_ERROR in tool_message["content"]
    trace = records(tmp_path)
    assert trace[0]["provider"] == "openai"
    assert any(r["kind"] == "intercept" for r in trace)


def test_parallel_calls_in_one_turn_get_one_result_each(library: CaseLibrary, tmp_path: Path) -> None:
    case, tools, start = start_for(library, "B2-TC-03")
    calls = [ToolUse("search_flights", {"origin": "北京", "destination": "成都", "date": "2026-04-13"}),
             ToolUse("search_hotels", {"city": "成都"})]
    with through_proxy(by_turn([tool_use_reply(calls), text_reply("好的")]), case, tmp_path) as (upstream, proxy):
        outcome = run_agent(start, AnthropicTurnClient("m", proxy.url, "k"), tools)
    results = upstream.requests[1].body["messages"][-1]["content"]
    assert [block["type"] for block in results] == ["tool_result", "tool_result"]
    assert outcome.tool_calls == 2


def test_simulated_user_answers_each_time_the_agent_ends_its_turn(library: CaseLibrary, tmp_path: Path) -> None:
    case, tools, start = start_for(library, "C4-PA-03")
    replies = case.input.simulated_user.replies  # type: ignore[union-attr]
    with through_proxy(lambda request: text_reply("还需要什么信息吗？"), case, tmp_path) as (upstream, proxy):
        user = ScriptedUser(replies, max_turns=4)
        outcome = run_agent(start, AnthropicTurnClient("m", proxy.url, "k"), tools, user=user)
    # max_turns 4 user turns in all: the case's own message plus three scripted replies.
    assert outcome.user_turns == 3 and outcome.turns == 4
    last = upstream.requests[-1].body["messages"]
    assert [m["content"] for m in last if m["role"] == "user"][1:] == replies[:3]


def test_limits_and_api_errors_end_the_session(library: CaseLibrary, tmp_path: Path) -> None:
    case, tools, start = start_for(library, "B2-TS-01")
    looping = lambda request: tool_use_reply(ToolUse("web_search", {"query": "机票"}))  # noqa: E731
    with through_proxy(looping, case, tmp_path / "loop") as (_, proxy):
        outcome = run_agent(start, AnthropicTurnClient("m", proxy.url, "k"), tools, AgentLimits(max_turns=3))
    assert (outcome.stop, outcome.turns, outcome.tool_calls) == ("turn_limit", 3, 3)
    failing = [error_reply(400, message="bad request", should_retry=False)]
    with through_proxy(failing, case, tmp_path / "error") as (_, proxy):
        outcome = run_agent(start, AnthropicTurnClient("m", proxy.url, "k"), tools)
    assert outcome.stop == "api_error" and "bad request" in (outcome.error or "")
