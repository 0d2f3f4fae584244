"""import openinference: spans from OpenInference's instrumentation of the openai SDK, recorded at the same
time by the proxy in front of the fake upstream, must analyze like the proxy's recording."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from openinference.instrumentation.openai import OpenAIInstrumentor
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
from test_otel_importer import chat_agent, weather_script

from tracekit.cli import cli
from tracekit.importers import import_openinference
from tracekit.trace import load_trace, trace_files


@pytest.fixture
def openinference_spans(tmp_path: Path) -> Iterator[Path]:
    """The weather session run through OpenInference's instrumentation and the recording proxy; the spans'
    OTLP JSON file (the recording is in ``tmp_path / "recorded"``)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with (
        instrumented(OpenAIInstrumentor(), tracer_provider=provider),
        recorded_upstream(weather_script(), tmp_path / "recorded") as proxy,
    ):
        chat_agent(proxy.url + "/v1")
    spans = exporter.get_finished_spans()
    assert {span.attributes.get("openinference.span.kind") for span in spans} == {"LLM"}
    path = tmp_path / "spans.json"
    path.write_bytes(otlp_json(spans))
    yield path
    provider.shutdown()


def test_openinference_instrumentation_matches_the_proxy(tmp_path: Path, openinference_spans: Path) -> None:
    imported = tmp_path / "imported"
    result = import_command("openinference", str(openinference_spans), "--out", str(imported))
    assert result.exit_code == 0, result.output
    ours, theirs = analyze_json(imported), analyze_json(tmp_path / "recorded")
    assert [session_view(t) for t in ours["traces"]] == [session_view(t) for t in theirs["traces"]]
    assert ours["traces"][0]["stats"]["tool_calls"] == 3
    assert final_answers(imported) == final_answers(tmp_path / "recorded") == ["北京晴，上海多云，广州有雨。"]
    [trace] = [load_trace(path) for path in trace_files([imported])]
    assert trace.header.source == "import:openinference" and trace.problems == []
    assert trace.records[0].content == "你是天气助手。"


def test_spans_of_other_kinds_are_named_in_problems(tmp_path: Path, openinference_spans: Path) -> None:
    # An OpenInference RETRIEVER span in the same trace as the first LLM call: not a model or tool call.
    document = orjson.loads(openinference_spans.read_bytes())
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    retriever = {
        **spans[0],
        "spanId": "AAAAAAAAAAE=",
        "name": "retrieve",
        "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}}],
    }
    spans.append(retriever)
    openinference_spans.write_bytes(orjson.dumps(document))
    problems: list[str] = []
    [trace] = import_openinference([openinference_spans], problems)
    assert problems == []
    [note] = trace.header.meta["problems"]
    assert note.endswith("span 'retrieve': not a model call or a tool call; not mapped")
    assert note.startswith(f"{openinference_spans}: resourceSpans[0].scopeSpans[0].spans[3]")


def test_malformed_input_names_file_and_position_and_imports_the_rest(
    tmp_path: Path, openinference_spans: Path
) -> None:
    document = orjson.loads(openinference_spans.read_bytes())
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[1]["spanId"] = 7  # not an id: the second model call is lost
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"[1, 2\n" + orjson.dumps(document) + b"\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["import", "openinference", str(path), "--out", str(out)])
    assert result.exit_code == 2
    assert f"{path}:1: not valid JSON" in result.output
    assert f"{path}:2: resourceSpans[0].scopeSpans[0].spans[1]: spanId" in result.output
    [trace] = [load_trace(p) for p in trace_files([out])]
    assert trace.stats().llm_calls == 2, "the first and the last model call, stitched"
    assert len(trace.calls()) == 3, "the last call re-sends the second one's tool calls"
