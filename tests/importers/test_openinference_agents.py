"""import openinference: spans of an OpenAI Agents SDK run written by OpenInference's instrumentation of the
SDK (``openinference-instrumentation-openai-agents``): AGENT and CHAIN containers, an LLM span per model call
and a TOOL span per tool call, on chat completions and on the Responses API, must analyze like the proxy's
recording of the same run. Only the instrumentation's processor is registered: nothing is exported."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, function_tool, set_trace_processors, set_tracing_disabled
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.models.openai_responses import OpenAIResponsesModel
from openai import AsyncOpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from producer_support import analyze_json, final_answers, import_command, otlp_json, recorded_upstream, session_view
from test_otel_importer import WEATHER, weather_script

from tracekit.trace import load_trace, trace_files

instrumentation = pytest.importorskip(
    "openinference.instrumentation.openai_agents", reason="openinference-instrumentation-openai-agents not installed"
)
ANSWER = "北京晴，上海多云，广州有雨。"


@function_tool
def get_weather(city: str) -> str:
    """The weather of a city."""
    return WEATHER.get(city, "未知")


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    set_trace_processors([])  # the SDK's default processor would export to the network
    set_tracing_disabled(False)
    instrumentor = instrumentation.OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    yield spans
    instrumentor.uninstrument()
    set_trace_processors([])
    set_tracing_disabled(True)
    provider.shutdown()


@pytest.mark.parametrize("responses", [False, True], ids=["chat-completions", "responses"])
def test_openinference_agents_spans_match_the_proxy(
    tmp_path: Path, exporter: InMemorySpanExporter, responses: bool
) -> None:
    async def run(base_url: str) -> Any:
        client = AsyncOpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
        model: Any = (OpenAIResponsesModel if responses else OpenAIChatCompletionsModel)("gpt-test", client)
        agent = Agent(name="weather", instructions="你是天气助手。", tools=[get_weather], model=model)
        return (await Runner.run(agent, "北京、上海、广州天气怎么样？")).final_output

    with recorded_upstream(weather_script(), tmp_path / "recorded") as proxy:
        assert asyncio.run(run(proxy.url + "/v1")) == ANSWER
    spans = exporter.get_finished_spans()
    kinds = [(span.attributes or {}).get("openinference.span.kind") for span in spans]
    assert kinds.count("LLM") == 3 and kinds.count("TOOL") == 3 and "AGENT" in kinds
    (tmp_path / "spans.json").write_bytes(otlp_json(spans))
    imported = tmp_path / "imported"
    result = import_command("openinference", str(tmp_path / "spans.json"), "--out", str(imported))
    assert result.exit_code == 0, result.output
    ours, theirs = analyze_json(imported), analyze_json(tmp_path / "recorded")
    assert [session_view(t) for t in ours["traces"]] == [session_view(t) for t in theirs["traces"]]
    assert ours["traces"][0]["stats"]["tool_calls"] == 3 and ours["traces"][0]["problems"] == []
    assert final_answers(imported) == final_answers(tmp_path / "recorded") == [ANSWER]
    [trace] = [load_trace(path) for path in trace_files([imported])]
    assert [(c.name, c.input, c.result_text) for c in trace.calls()] == [
        ("get_weather", {"city": "北京"}, "晴"), ("get_weather", {"city": "上海"}, "多云"),
        ("get_weather", {"city": "广州"}, "雨")]  # fmt: skip
    assert trace.header.meta["agent"] == "weather", "the named agent, not the workflow span around it"
