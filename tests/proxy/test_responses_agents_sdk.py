"""The OpenAI Agents SDK (``openai-agents``) through ``tracekit record`` and ``tracekit replay``: one agent with
one ``@function_tool``, on its default model (the Responses API, pointed at the proxy with
``OPENAI_BASE_URL`` or ``set_default_openai_client``) and on ``OpenAIChatCompletionsModel``; each run is
one trace with the right calls, arguments, results and final answer, and replays to the same output.
Tracing is disabled and nothing leaves loopback.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    Runner,
    function_tool,
    set_default_openai_client,
    set_tracing_disabled,
)
from agents.models import _openai_shared, openai_provider
from click.testing import CliRunner
from openai import AsyncOpenAI

from tracekit.cli.main import cli
from tracekit.testing import ToolUse, by_turn, text_reply, tool_use_reply

from .helpers import of_kind, recording, replaying, trace_records

FINAL = "北京晴，上海多云。"
SCRIPT = by_turn([
    tool_use_reply([ToolUse("get_weather", {"city": "北京"}), ToolUse("get_weather", {"city": "上海"})]),
    text_reply(FINAL),
])  # fmt: skip


@function_tool
def get_weather(city: str) -> str:
    """The weather of a city."""
    return {"北京": "晴", "上海": "多云"}.get(city, "未知")


@pytest.fixture(autouse=True)
def agents_sdk_offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No tracing export, no default client left behind, no real key or base URL from the environment.

    The SDK's default provider keeps one HTTP client per process, bound to the event loop that first used it
    (an application runs one loop); each test here runs its own loop, so each starts without that client."""
    set_tracing_disabled(True)
    saved = _openai_shared.get_default_openai_client()
    monkeypatch.setattr(openai_provider, "_http_client", None)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield
    _openai_shared.set_default_openai_client(saved)  # type: ignore[arg-type]


async def run_agent(model: Any = None, streamed: bool = False) -> str:
    """The agent's final output for one question (``Runner.run`` or ``Runner.run_streamed``)."""
    agent = Agent(name="weather", instructions="你是天气助手。", tools=[get_weather],
                  **({"model": model} if model is not None else {}))  # fmt: skip
    if streamed:
        result = Runner.run_streamed(agent, "北京和上海天气？")
        async for _event in result.stream_events():
            pass
        return str(result.final_output)
    return str((await Runner.run(agent, "北京和上海天气？")).final_output)


def record_then_replay(
    tmp_path: Path, run: Callable[[str], Awaitable[str]]
) -> tuple[str, str, list[dict[str, Any]]]:
    """``run(base_url)`` through a recording proxy, then through a replaying one, in one event loop."""

    async def both() -> tuple[str, str]:
        with recording(SCRIPT, tmp_path) as (upstream, proxy):
            recorded = await run(proxy.url + "/v1")
            assert upstream.requests, "the run went upstream"
        with replaying(tmp_path) as proxy:
            replayed = await run(proxy.url + "/v1")
            assert proxy.proxy.misses == []
        return recorded, replayed

    recorded, replayed = asyncio.run(both())
    (records,) = trace_records(tmp_path)
    return recorded, replayed, records


def assert_agent_session(records: list[dict[str, Any]], provider: str) -> None:
    calls = of_kind(records, "model_call")
    assert [c["provider"] for c in calls] == [provider, provider]
    assert [c["stitched"] for c in calls] == ["new", "continuity"]
    assert [(c["name"], c["input"]) for c in of_kind(records, "tool_call")] == [
        ("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]
    assert [r["content"] for r in of_kind(records, "tool_result")] == ["晴", "多云"]
    assert of_kind(records, "assistant_message")[-1]["content"] == [{"type": "text", "text": FINAL}]
    assert of_kind(records, "system_message")[0]["content"] == "你是天气助手。"


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
def test_default_model_through_openai_base_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool) -> None:
    async def run(base_url: str) -> str:
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
        return await run_agent(streamed=streamed)

    recorded, replayed, records = record_then_replay(tmp_path, run)
    assert recorded == replayed == FINAL
    assert_agent_session(records, "openai_responses")
    assert all(c["stream"] is streamed for c in of_kind(records, "model_call"))


def test_default_model_through_set_default_openai_client(tmp_path: Path) -> None:
    async def run(base_url: str) -> str:
        set_default_openai_client(AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0), use_for_tracing=False)
        return await run_agent()

    recorded, replayed, records = record_then_replay(tmp_path, run)
    assert recorded == replayed == FINAL
    assert_agent_session(records, "openai_responses")


def test_chat_completions_model(tmp_path: Path) -> None:
    async def run(base_url: str) -> str:
        client = AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)
        return await run_agent(OpenAIChatCompletionsModel(model="gpt-test", openai_client=client))

    recorded, replayed, records = record_then_replay(tmp_path, run)
    assert recorded == replayed == FINAL
    assert_agent_session(records, "openai")


def test_analyze_reports_the_agents_sdk_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with recording(SCRIPT, tmp_path / "rec") as (_, proxy):
        monkeypatch.setenv("OPENAI_BASE_URL", proxy.url + "/v1")
        assert asyncio.run(run_agent()) == FINAL
    report = tmp_path / "analysis.json"
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "rec"), "--json", str(report)])
    assert result.exit_code == 0, result.output
    [trace] = json.loads(report.read_text(encoding="utf-8"))["traces"]
    assert [(c["name"], c["input"], c["is_error"]) for c in trace["tool_calls"]] == [
        ("get_weather", {"city": "北京"}, False), ("get_weather", {"city": "上海"}, False)]
    assert trace["stats"]["llm_calls"] == 2
