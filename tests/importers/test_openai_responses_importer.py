"""openai-responses importer: Responses API items to a trace, checked input, the CLI command, analyze.

The items are produced by a real producer: the OpenAI Agents SDK running one ``@function_tool`` agent
against the scripted fake upstream, exported with ``result.to_input_list()``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.models.openai_responses import OpenAIResponsesModel
from click.testing import CliRunner
from importer_support import assert_refused_at, write_json
from openai import AsyncOpenAI

from tracekit.cli.main import cli
from tracekit.importers import import_openai_responses, read_openai_responses, write_traces
from tracekit.testing import FakeUpstream, Thinking, ToolUse, by_turn, text_reply, tool_use_reply
from tracekit.trace import SystemMessage, load_trace

SCRIPT = by_turn([
    tool_use_reply([ToolUse("get_weather", {"city": "北京"}), ToolUse("get_weather", {"city": "火星"})],
                   thinking=Thinking("两个城市一起查")),
    text_reply("北京晴；火星查不到。"),
])  # fmt: skip


@function_tool
def get_weather(city: str) -> str:
    """The weather of a city."""
    return {"北京": "晴"}.get(city, "Error: unknown city")


def agents_sdk_items() -> list[dict[str, Any]]:
    """``to_input_list()`` of one Agents SDK run (Responses model, tracing off, loopback only)."""
    set_tracing_disabled(True)

    async def run() -> list[dict[str, Any]]:
        with FakeUpstream(SCRIPT) as upstream:
            client = AsyncOpenAI(base_url=upstream.openai_url, api_key="k", max_retries=0)
            agent = Agent(name="weather", instructions="你是天气助手。", tools=[get_weather],
                          model=OpenAIResponsesModel("gpt-test", client))  # fmt: skip
            result = await Runner.run(agent, "北京和火星天气？")
            items: list[dict[str, Any]] = result.to_input_list()  # type: ignore[assignment]
            return items

    return asyncio.run(run())


@pytest.fixture(scope="module")
def items() -> list[dict[str, Any]]:
    return agents_sdk_items()


@pytest.mark.parametrize("wrap", [False, True], ids=["list", "object"])
def test_agents_sdk_items_become_one_trace(tmp_path: Path, items: list[dict[str, Any]], wrap: bool) -> None:
    value: Any = {"instructions": "你是天气助手。", "input": items[:1], "output": items[1:]} if wrap else items
    path = write_json(tmp_path / "run.json", value)
    [written] = write_traces(import_openai_responses([path], case_id="B2-TC-01"), tmp_path / "out")
    trace = load_trace(written)
    assert trace.header.provider == "openai_responses" and trace.header.case_id == "B2-TC-01"
    assert trace.header.source == "import:openai-responses"
    assert [r.content for r in trace.of_kind(SystemMessage)] == (["你是天气助手。"] if wrap else [])
    calls = trace.calls()
    assert [(c.name, c.input) for c in calls] == [("get_weather", {"city": "北京"}), ("get_weather", {"city": "火星"})]
    assert [c.result_text for c in calls] == ["晴", "Error: unknown city"]
    assert trace.final_answer() == "北京晴；火星查不到。"
    thinking = [b for r in trace.kind("assistant_message") for b in r.content if b["type"] == "thinking"]
    assert [b["thinking"] for b in thinking] == ["两个城市一起查"]


def test_string_input_object(tmp_path: Path) -> None:
    path = write_json(tmp_path / "q.json", {"input": "你好", "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "您好！"}]}]})
    system, messages = read_openai_responses(path)
    assert system is None
    assert messages == [{"role": "user", "content": "你好"},
                        {"role": "assistant", "content": [{"type": "text", "text": "您好！"}]}]


@pytest.mark.parametrize(("value", "where"), [
    ("hello", "items: expected a list of items, got string"),
    ({"messages": []}, 'expected a list of items or an object with "input"'),
    ({"input": [], "instructions": 3}, "instructions: expected a string, got number"),
    ({"input": [], "output": {}}, "output: expected a list of items, got object"),
    ([3], "items[0]: expected an item object, got number"),
    ([{"content": "x"}], 'items[0]: expected an item with "type" or a message with "role"'),
    ([{"type": 1}], "items[0].type: expected a string, got number"),
    ([{"role": "robot", "content": "x"}], "items[0].role: expected one of user"),
    ([{"role": "user", "content": ["x"]}], "items[0].content[0]: expected a content part"),
    ([{"type": "function_call", "name": "f", "arguments": "{}"}], 'items[0].call_id: function_call without a string'),
    ([{"type": "function_call", "name": "f", "call_id": "c", "arguments": 3}], "items[0].arguments: expected a JSON"),
    ([{"type": "function_call_output", "output": "x"}], "items[0].call_id: function_call_output without"),
    ({"input": "x", "output": [{"type": "function_call_output", "call_id": "c", "output": 5}]},
     "output[0].output: expected a string or a list of parts for output, got number"),
])  # fmt: skip
def test_bad_input_is_refused_with_its_position(tmp_path: Path, value: Any, where: str) -> None:
    path = write_json(tmp_path / "bad.json", value)
    assert_refused_at(path, where, lambda: read_openai_responses(path))


def test_cli_imports_and_analyze_reports_the_calls(tmp_path: Path, items: list[dict[str, Any]]) -> None:
    source = write_json(tmp_path / "agents-run.json", items)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["import", "openai-responses", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote 1 trace to {out}" in result.output
    report = tmp_path / "analysis.json"
    analyzed = CliRunner().invoke(cli, ["analyze", str(out), "--json", str(report)])
    assert analyzed.exit_code == 0, analyzed.output
    [trace] = json.loads(report.read_text(encoding="utf-8"))["traces"]
    assert [(c["name"], c["input"]) for c in trace["tool_calls"]] == [
        ("get_weather", {"city": "北京"}), ("get_weather", {"city": "火星"})]
    assert trace["stats"]["tool_calls"] == 2


def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    source = write_json(tmp_path / "bad.json", [{"type": "function_call_output", "output": "x"}])
    result = CliRunner().invoke(cli, ["import", "openai-responses", str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert f"{source}: items[0].call_id" in result.output
    assert not (tmp_path / "out").exists()
