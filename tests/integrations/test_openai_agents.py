"""The tracekit processor inside a running OpenAI Agents SDK agent, and ``tracekit import openai-agents`` on
the SDK's own trace export: the same session recorded by the proxy in front of the fake upstream must
analyze the same (tool calls and stats)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, function_tool, set_trace_processors, set_tracing_disabled
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.models.openai_responses import OpenAIResponsesModel
from agents.tracing.processor_interface import TracingExporter
from agents.tracing.processors import BatchTraceProcessor
from openai import AsyncOpenAI

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importers"))  # the producers' shared helpers
from producer_support import analyze_json, final_answers, import_command, recorded_upstream, session_view

from tracekit.integrations.openai_agents import TracekitProcessor
from tracekit.testing import ToolUse, by_turn, text_reply, tool_use_reply
from tracekit.trace import load_trace, trace_files

ANSWER = "北京晴，上海多云，广州有雨。"


@function_tool
def get_weather(city: str) -> str:
    """The weather of a city."""
    return {"北京": "晴", "上海": "多云", "广州": "雨"}.get(city, "未知")


def weather_script() -> Any:
    return by_turn([
        tool_use_reply(ToolUse("get_weather", {"city": "北京"}), text="我查一下。"),
        tool_use_reply([ToolUse("get_weather", {"city": "上海"}), ToolUse("get_weather", {"city": "广州"})]),
        text_reply(ANSWER),
    ])


class JsonLinesExporter(TracingExporter):
    """Writes what the SDK's backend exporter would send (``{"data": [item.export(), ...]}``) to a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, items: list[Any]) -> None:
        data = [item.export() for item in items if item.export()]
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps({"data": data}, ensure_ascii=False) + "\n")


@pytest.fixture
def processors(tmp_path: Path) -> Iterator[tuple[TracekitProcessor, BatchTraceProcessor]]:
    """The tracekit processor and the SDK's batch processor with a file exporter, and nothing else (no
    export to the network)."""
    ours = TracekitProcessor(tmp_path / "processor")
    exported = BatchTraceProcessor(JsonLinesExporter(tmp_path / "export.jsonl"))
    set_tracing_disabled(False)
    set_trace_processors([ours, exported])
    yield ours, exported
    set_trace_processors([])
    set_tracing_disabled(True)


def run_agent(base_url: str, responses: bool, streamed: bool = False) -> str:
    async def run() -> str:
        client = AsyncOpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
        model: Any = (OpenAIResponsesModel if responses else OpenAIChatCompletionsModel)("gpt-test", client)
        agent = Agent(name="weather", instructions="你是天气助手。", tools=[get_weather], model=model)
        if streamed:
            running = Runner.run_streamed(agent, "北京、上海、广州天气怎么样？")
            async for _event in running.stream_events():
                pass
            return str(running.final_output)
        result = await Runner.run(agent, "北京、上海、广州天气怎么样？")
        return str(result.final_output)

    return asyncio.run(run())


def assert_processor_matches_the_proxy(tmp_path: Path) -> dict[str, Any]:
    """The processor's traces analyze like the proxy's recording of the same run; returns the recording's
    analysis."""
    mine, theirs = analyze_json(tmp_path / "processor"), analyze_json(tmp_path / "recorded")
    assert [session_view(t) for t in mine["traces"]] == [session_view(t) for t in theirs["traces"]]
    assert final_answers(tmp_path / "processor") == final_answers(tmp_path / "recorded") == [ANSWER]
    assert mine["traces"][0]["problems"] == []
    return theirs


def import_the_export(tmp_path: Path, theirs: dict[str, Any]) -> Path:
    """``tracekit import openai-agents`` of the SDK's own export; its calls analyze like the recording's."""
    imported = tmp_path / "imported"
    assert import_command("openai-agents", str(tmp_path / "export.jsonl"), "--out", str(imported)).exit_code == 0
    again = analyze_json(imported)
    assert [session_view(t) for t in again["traces"]] == [session_view(t) for t in theirs["traces"]]
    return imported


def test_processor_trace_matches_the_proxy_chat_completions(
    tmp_path: Path, processors: tuple[TracekitProcessor, BatchTraceProcessor]
) -> None:
    ours, exported = processors
    with recorded_upstream(weather_script(), tmp_path / "recorded") as proxy:
        assert run_agent(proxy.url + "/v1", responses=False) == ANSWER
    exported.force_flush()
    [written] = ours.written
    assert written.parent == tmp_path / "processor"
    theirs = assert_processor_matches_the_proxy(tmp_path)
    # The SDK's own export of a chat-completions run holds the messages too: the import is just as complete.
    assert final_answers(import_the_export(tmp_path, theirs)) == [ANSWER]


def test_responses_model_processor_keeps_what_the_export_leaves_out(
    tmp_path: Path, processors: tuple[TracekitProcessor, BatchTraceProcessor]
) -> None:
    ours, exported = processors
    with recorded_upstream(weather_script(), tmp_path / "recorded") as proxy:
        assert run_agent(proxy.url + "/v1", responses=True) == ANSWER
    exported.force_flush()
    [trace] = [load_trace(path) for path in ours.written]
    assert trace.header.provider == "openai_responses" and trace.problems == []
    assert [(c.name, c.input, c.result_text) for c in trace.calls()] == [
        ("get_weather", {"city": "北京"}, "晴"), ("get_weather", {"city": "上海"}, "多云"),
        ("get_weather", {"city": "广州"}, "雨")]
    assert trace.final_answer() == ANSWER and trace.stats().llm_calls == 3

    imported = tmp_path / "imported"
    assert import_command("openai-agents", str(tmp_path / "export.jsonl"), "--out", str(imported)).exit_code == 0
    [from_export] = [load_trace(path) for path in trace_files([imported])]
    assert [(c.name, c.input, c.result_text) for c in from_export.calls()] == [
        (c.name, c.input, c.result_text) for c in trace.calls()]
    assert from_export.stats() == trace.stats(), "usage is in the export's response spans"
    assert from_export.final_answer() == "", "the SDK's export holds no reply text"
    assert any("not in the export" in str(problem) for problem in from_export.problems)


@pytest.mark.parametrize("responses", [False, True], ids=["chat-completions", "responses"])
def test_a_streamed_run_matches_the_proxy_from_the_processor_and_the_export(
    tmp_path: Path, processors: tuple[TracekitProcessor, BatchTraceProcessor], responses: bool
) -> None:
    # Runner.run_streamed: the SDK keeps a streamed chat completion's reply in the Responses shape.
    _, exported = processors
    with recorded_upstream(weather_script(), tmp_path / "recorded") as proxy:
        assert run_agent(proxy.url + "/v1", responses=responses, streamed=True) == ANSWER
    exported.force_flush()
    imported = import_the_export(tmp_path, assert_processor_matches_the_proxy(tmp_path))
    if not responses:  # the export of a Responses model holds no reply text (see above)
        assert final_answers(imported) == [ANSWER]


def test_malformed_export_names_file_and_position_and_imports_the_rest(
    tmp_path: Path, processors: tuple[TracekitProcessor, BatchTraceProcessor]
) -> None:
    _, exported = processors
    with recorded_upstream(weather_script(), tmp_path / "recorded") as proxy:
        run_agent(proxy.url + "/v1", responses=False)
    exported.force_flush()
    path = tmp_path / "export.jsonl"
    path.write_text('{"data": [42]}\n' + path.read_text(encoding="utf-8") + "{oops\n", encoding="utf-8")
    out = tmp_path / "out"
    result = import_command("openai-agents", str(path), "--out", str(out))
    assert result.exit_code == 2
    assert f"{path}:1: data[0]: expected an object" in result.output
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert f"{path}:{lines}: not valid JSON" in result.output
    [trace] = [load_trace(p) for p in trace_files([out])]
    assert trace.final_answer() == ANSWER and len(trace.calls()) == 3
