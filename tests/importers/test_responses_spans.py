"""import otel / openinference of an agent on the Responses API: the instrumentations write each input item
as a message of its own (the reply's text, then each function call; each function call output) and
OpenInference each output item too, while the proxy groups the items into turns; the imported session
must still be one trace that analyzes like the proxy's recording of it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openinference.instrumentation.openai import OpenAIInstrumentor as OpenInferenceInstrumentor
from opentelemetry.instrumentation.openai import OpenAIInstrumentor as OpenLLMetryInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from producer_support import (
    analyze_json,
    final_answers,
    import_command,
    instrumented,
    otlp_json,
    recorded_upstream,
    session_view,
)
from test_otel_importer import WEATHER, weather_script

from tracekit.trace import load_trace, trace_files

TOOLS: list[Any] = [{"type": "function", "name": "get_weather", "description": "weather",
                     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]  # fmt: skip


def responses_agent(base_url: str, stream: bool) -> None:
    """A tool loop on ``client.responses.create`` (or the ``responses.stream()`` helper) that re-sends the
    whole input each turn."""
    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    items: list[Any] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
    for _ in range(5):
        request: dict[str, Any] = {"model": "gpt-test", "instructions": "你是天气助手。", "input": items}
        request["tools"] = TOOLS
        if stream:
            with client.responses.stream(**request) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(**request)
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return
        items += [item.to_dict(mode="json", exclude_none=True) for item in response.output]
        items += [{"type": "function_call_output", "call_id": call.call_id,
                   "output": WEATHER[json.loads(call.arguments)["city"]]} for call in calls]  # fmt: skip


@pytest.fixture
def span_exporter() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
@pytest.mark.parametrize(
    ("fmt", "instrumentor"),
    [("otel", OpenLLMetryInstrumentor), ("openinference", OpenInferenceInstrumentor)],
    ids=["openllmetry-otel", "openinference"],
)
def test_a_responses_session_imports_like_the_proxy_recorded_it(
    tmp_path: Path,
    span_exporter: tuple[TracerProvider, InMemorySpanExporter],
    fmt: str,
    instrumentor: Any,
    stream: bool,
) -> None:
    provider, exporter = span_exporter
    with (
        instrumented(instrumentor(), tracer_provider=provider),
        recorded_upstream(weather_script(), tmp_path / "recorded") as proxy,
    ):
        responses_agent(proxy.url + "/v1", stream)
    spans = exporter.get_finished_spans()
    assert len(spans) == 3 and len({span.context.trace_id for span in spans}) == 3, "stitched on import"
    (tmp_path / "spans.json").write_bytes(otlp_json(spans))
    imported = tmp_path / "imported"
    result = import_command(fmt, str(tmp_path / "spans.json"), "--out", str(imported))
    assert result.exit_code == 0, result.output
    ours, theirs = analyze_json(imported), analyze_json(tmp_path / "recorded")
    assert [session_view(t) for t in ours["traces"]] == [session_view(t) for t in theirs["traces"]]
    assert ours["traces"][0]["stats"]["tool_calls"] == 3 and ours["traces"][0]["problems"] == []
    assert final_answers(imported) == final_answers(tmp_path / "recorded") == ["北京晴，上海多云，广州有雨。"]
    [trace] = [load_trace(path) for path in trace_files([imported])]
    assert [(c.name, c.input, c.result_text) for c in trace.calls()] == [
        ("get_weather", {"city": "北京"}, "晴"), ("get_weather", {"city": "上海"}, "多云"),
        ("get_weather", {"city": "广州"}, "雨")]  # fmt: skip
