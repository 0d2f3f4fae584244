"""An OpenAI Agents SDK agent with an MCP server (``MCPServerStdio`` pointed at the wrapper) and its model
through ``tracekit record`` against the fake upstream: one trace per session whose calls carry what the tool
server really returned and how long it took; then the whole session replayed offline, both sides."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import orjson
from agents import Agent, Runner, set_tracing_disabled
from agents.items import ToolCallOutputItem
from agents.mcp import MCPServerStdio
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from click.testing import CliRunner
from mcp_helpers import SERVER, Running, tracekit
from openai import AsyncOpenAI

from tracekit.cli import cli
from tracekit.testing import FakeUpstream, ToolUse, by_turn, text_reply, tool_use_reply
from tracekit.trace import load_trace, trace_files

ANSWER = "北京晴 25°C；2 加 3 等于 5。"


def script() -> Any:
    return by_turn([
        tool_use_reply(ToolUse("maps_weather", {"city": "北京"}), text="我查一下。"),
        tool_use_reply(ToolUse("add", {"a": 2, "b": 3})),
        text_reply(ANSWER),
    ])


def run_agent(model_url: str, mcp_command: list[str], env: dict[str, str]) -> tuple[str, list[str]]:
    """The agent's final answer and the tool outputs it gave the model."""

    async def run() -> tuple[str, list[str]]:
        set_tracing_disabled(True)
        client = AsyncOpenAI(base_url=model_url + "/v1", api_key="sk-test", max_retries=0)
        params = {"command": mcp_command[0], "args": mcp_command[1:], "env": env}
        async with MCPServerStdio(params=params, name="weather", client_session_timeout_seconds=60) as server:
            agent = Agent(name="weather", instructions="你是助手。", mcp_servers=[server],
                          model=OpenAIChatCompletionsModel("gpt-test", client))  # fmt: skip
            result = await Runner.run(agent, "北京天气怎么样？2 加 3 是多少？")
        outputs = [str(item.output) for item in result.new_items if isinstance(item, ToolCallOutputItem)]
        return str(result.final_output), outputs

    return asyncio.run(run())


def test_one_trace_per_session_with_both_sides_then_replayed_offline(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    marker = tmp_path / "server-started"
    env = {"WEATHER_MARKER": str(marker)}
    wrapper = tracekit("mcp", "record", "--out", str(out), "--", sys.executable, str(SERVER))
    with FakeUpstream(script()) as upstream, Running(
        tracekit("record", "--upstream", upstream.url, "--port", "0", "--out", str(out)), banner_on="stdout"
    ) as proxy:
        answer, outputs = run_agent(proxy.url(), wrapper, env)
    assert answer == ANSWER and marker.exists()

    joined = CliRunner().invoke(cli, ["mcp", "join", str(out)], catch_exceptions=False)
    assert joined.exit_code == 0 and "2 of 2 tool calls" in joined.output, joined.output
    [path] = trace_files([out])  # one trace: the tool side joined the model side
    trace = load_trace(path)
    calls = trace.calls()
    assert [(c.name, c.input) for c in calls] == [("maps_weather", {"city": "北京"}), ("add", {"a": 2, "b": 3})]
    exchanges = {e.call_index: e for e in trace.kind("mcp_exchange") if e.method == "tools/call"}
    for call in calls:
        exchange = exchanges[call.index]  # what the tool server really did for this call of the model
        assert call.call.mcp_call == exchange.mcp_call and exchange.latency_ms > 0
        assert exchange.result["content"][0]["text"] in call.result_text  # and what the model was told
    assert exchanges[0].result["content"][0]["text"] == "北京: 晴 25°C x1"
    handshakes = {e.method for e in trace.kind("mcp_exchange")} & {"initialize", "server/discover"}
    assert handshakes  # the SDK's handshake: initialize, or server/discover (MCP 2026-07-28) as mcp 2.x sends

    result = CliRunner().invoke(cli, ["analyze", str(out), "--json", str(tmp_path / "r.json")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [entry] = orjson.loads((tmp_path / "r.json").read_bytes())["traces"]
    assert entry["stats"]["tool_calls"] == 2 and entry["stats"]["llm_calls"] == 3
    side = entry["tool_side"]  # what the tool server really did, per call of the model
    assert side["tool_calls"] == 2 and side["tool_errors"] == 0 and side["latency_ms"]["total"] > 0
    assert side["servers"] == [{"name": "weather-test", "version": "1.2.3"}]
    assert [(c["call"], c["name"]) for c in side["calls"]] == [(0, "maps_weather"), (1, "add")]

    marker.unlink()
    with Running(tracekit("replay", str(out), "--port", "0"), banner_on="stdout") as replay:
        replayed = run_agent(replay.url(), tracekit("mcp", "replay", str(out)), env)
    assert replayed == (answer, outputs)  # the whole session, model and tools, offline
    assert not marker.exists()


def test_a_finding_when_the_model_was_told_otherwise_than_the_tool_returned(tmp_path: Path) -> None:
    """The model proxy's own intercept rewrites the weather result the model sees: the tool side shows what the
    server really returned, and analyze flags the difference."""
    out = tmp_path / "traces"
    case = tmp_path / "case.json"
    intercept = {"type": "tool_intercept", "intercept_tool": "maps_weather",
                 "inject_tool_result": {"is_error": False, "content": "北京: 暴雨"}}  # fmt: skip
    case.write_text(json.dumps(intercept, ensure_ascii=False), encoding="utf-8")
    wrapper = tracekit("mcp", "record", "--out", str(out), "--", sys.executable, str(SERVER))
    with FakeUpstream(script()) as upstream, Running(
        tracekit("record", "--upstream", upstream.url, "--port", "0", "--out", str(out), "--case", str(case)),
        banner_on="stdout",
    ) as proxy:
        run_agent(proxy.url(), wrapper, {})
    assert CliRunner().invoke(cli, ["mcp", "join", str(out)]).exit_code == 0
    analyzed = ["analyze", str(out), "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "html")]
    result = CliRunner().invoke(cli, analyzed, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [entry] = orjson.loads((tmp_path / "r.json").read_bytes())["traces"]
    [finding] = [f for f in entry["findings"] if f["kind"] == "tool_result_mismatch"]
    assert finding["calls"] == [0] and "暴雨" in finding["message"] and "北京: 晴 25°C x1" in finding["message"]
    pages = [page.read_text(encoding="utf-8") for page in (tmp_path / "html").rglob("*.html")]
    [page] = [page for page in pages if "tool server (MCP)" in page]  # the timeline shows both sides of the call
    assert "北京: 暴雨" in page and "北京: 晴 25°C x1" in page
