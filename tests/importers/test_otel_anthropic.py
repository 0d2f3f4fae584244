"""import otel: spans of an anthropic SDK agent, written by OpenLLMetry's anthropic instrumentation
(``opentelemetry-instrumentation-anthropic``, the maintained GenAI instrumentation of that SDK), recorded at
the same time by the proxy in front of the fake upstream, must analyze like the proxy's recording."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from producer_support import analyze_json, final_answers, import_command, otlp_json, recorded_upstream, session_view
from test_otel_importer import WEATHER, weather_script

from tracekit.trace import load_trace, trace_files

instrumentation = pytest.importorskip(
    "opentelemetry.instrumentation.anthropic", reason="opentelemetry-instrumentation-anthropic not installed"
)

TOOLS: list[Any] = [{"name": "get_weather", "description": "weather",
                     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]  # fmt: skip


def anthropic_agent(base_url: str) -> None:
    """A hand-written Messages API tool loop, as agents on the anthropic SDK are written."""
    client = anthropic.Anthropic(base_url=base_url, api_key="sk-ant-test", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
    for _ in range(5):
        reply = client.messages.create(model="claude-test", max_tokens=100, system="你是天气助手。",
                                       messages=messages, tools=TOOLS)  # fmt: skip
        messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in
                                                          reply.content]})  # fmt: skip
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            return
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use.id, "content": WEATHER[use.input["city"]]} for use in uses]})


def test_openllmetry_anthropic_matches_the_proxy(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = instrumentation.AnthropicInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with recorded_upstream(weather_script(), tmp_path / "recorded") as proxy:
            anthropic_agent(proxy.url)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    spans = exporter.get_finished_spans()
    assert len({span.context.trace_id for span in spans}) == 3, "each call is a trace of its own: stitched on import"
    assert all("gen_ai.input.messages" in (span.attributes or {}) for span in spans)
    (tmp_path / "spans.json").write_bytes(otlp_json(spans))
    imported = tmp_path / "imported"
    result = import_command("otel", str(tmp_path / "spans.json"), "--out", str(imported))
    assert result.exit_code == 0, result.output
    ours, theirs = analyze_json(imported), analyze_json(tmp_path / "recorded")
    assert [session_view(t) for t in ours["traces"]] == [session_view(t) for t in theirs["traces"]]
    assert ours["traces"][0]["stats"]["tool_calls"] == 3 and ours["traces"][0]["problems"] == []
    assert final_answers(imported) == final_answers(tmp_path / "recorded") == ["北京晴，上海多云，广州有雨。"]
    [trace] = [load_trace(path) for path in trace_files([imported])]
    assert trace.header.provider == "anthropic" and trace.records[0].content == "你是天气助手。"
    assert [(c.name, c.input, c.result_text) for c in trace.calls()] == [
        ("get_weather", {"city": "北京"}, "晴"), ("get_weather", {"city": "上海"}, "多云"),
        ("get_weather", {"city": "广州"}, "雨")]  # fmt: skip
