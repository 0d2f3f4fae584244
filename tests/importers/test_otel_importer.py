"""import otel: spans from the real OpenTelemetry GenAI instrumentations of the openai SDK, recorded at the
same time by the proxy in front of the fake upstream, must analyze like the proxy's recording; tracekit's
own ``export otel`` output must come back as the same traces."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest
from click.testing import CliRunner
from opentelemetry.instrumentation.openai import OpenAIInstrumentor as OpenLLMetryInstrumentor
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
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

from tracekit.cli import cli
from tracekit.importers import import_otel, write_traces
from tracekit.testing import ToolUse, by_turn, text_reply, tool_use_reply
from tracekit.trace import load_trace, trace_files

ROOT = Path(__file__).resolve().parents[2]
WEATHER = {"北京": "晴", "上海": "多云", "广州": "雨"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def weather_script() -> Any:
    """One call, then two parallel calls, then the answer."""
    return by_turn(
        [
            tool_use_reply(ToolUse("get_weather", {"city": "北京"}), text="我查一下。"),
            tool_use_reply([ToolUse("get_weather", {"city": "上海"}), ToolUse("get_weather", {"city": "广州"})]),
            text_reply("北京晴，上海多云，广州有雨。"),
        ]
    )


def chat_agent(base_url: str) -> None:
    """A hand-written Chat Completions tool loop, as agents are written."""
    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    messages: list[Any] = [
        {"role": "system", "content": "你是天气助手。"},
        {"role": "user", "content": "北京、上海、广州天气怎么样？"},
    ]
    for _ in range(5):
        message = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS).choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            city = json.loads(call.function.arguments)["city"]
            messages.append({"role": "tool", "tool_call_id": call.id, "content": WEATHER[city]})


@pytest.fixture
def span_exporter() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def assert_same_session(spans_file: Path, recorded: Path, tmp_path: Path) -> Path:
    imported = tmp_path / "imported"
    result = import_command("otel", str(spans_file), "--out", str(imported))
    assert result.exit_code == 0, result.output
    ours, theirs = analyze_json(imported), analyze_json(recorded)
    assert len(ours["traces"]) == len(theirs["traces"]) == 1
    assert [session_view(t) for t in ours["traces"]] == [session_view(t) for t in theirs["traces"]]
    assert ours["traces"][0]["stats"]["tool_calls"] == 3 and ours["traces"][0]["stats"]["llm_calls"] == 3
    assert final_answers(imported) == final_answers(recorded) == ["北京晴，上海多云，广州有雨。"]
    assert ours["traces"][0]["problems"] == []
    return imported


@pytest.mark.parametrize("capture", ["span_only", "event_only"])
def test_official_instrumentation_matches_the_proxy(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    span_exporter: tuple[TracerProvider, InMemorySpanExporter],
    capture: str,
) -> None:
    # The current opentelemetry-instrumentation-openai-v2 captures content only with these two settings;
    # event_only puts the messages on a gen_ai.client.inference.operation.details log record instead.
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", capture)
    provider, exporter = span_exporter
    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    with (
        instrumented(OpenAIInstrumentor(), tracer_provider=provider, logger_provider=logger_provider),
        recorded_upstream(weather_script(), tmp_path / "recorded") as proxy,
    ):
        chat_agent(proxy.url + "/v1")
    spans, records = exporter.get_finished_spans(), logs.get_finished_logs()
    assert len({span.context.trace_id for span in spans}) == 3, "each call is a trace of its own: stitched on import"
    on_spans = [("gen_ai.input.messages" in (span.attributes or {})) for span in spans]
    details = [record.log_record.event_name for record in records]
    if capture == "span_only":
        assert on_spans == [True] * 3 and details == []
    else:
        assert on_spans == [False] * 3 and details == ["gen_ai.client.inference.operation.details"] * 3
    (tmp_path / "spans.json").write_bytes(otlp_json(spans, records))
    imported = assert_same_session(tmp_path / "spans.json", tmp_path / "recorded", tmp_path)
    [trace] = [load_trace(path) for path in trace_files([imported])]
    assert trace.header.provider == "openai" and trace.header.model == "gpt-test"
    assert [record.kind for record in trace.records][:2] == ["system_message", "user_message"]


def test_openllmetry_default_attributes_match_the_proxy(
    tmp_path: Path, span_exporter: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    # OpenLLMetry's default path (span attributes, not events): from 0.5x it writes the current
    # gen_ai.input.messages / gen_ai.output.messages with its own extra attributes beside them.
    provider, exporter = span_exporter
    with (
        instrumented(OpenLLMetryInstrumentor(), tracer_provider=provider),
        recorded_upstream(weather_script(), tmp_path / "recorded") as proxy,
    ):
        chat_agent(proxy.url + "/v1")
    spans = exporter.get_finished_spans()
    assert all("gen_ai.input.messages" in (span.attributes or {}) for span in spans)
    (tmp_path / "spans.json").write_bytes(otlp_json(spans))
    assert_same_session(tmp_path / "spans.json", tmp_path / "recorded", tmp_path)


def test_events_of_the_older_conventions_match_the_proxy(
    tmp_path: Path, span_exporter: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    # OpenLLMetry's events path emits the <= 1.36 names as log records: gen_ai.system.message,
    # gen_ai.user.message, gen_ai.assistant.message, gen_ai.tool.message, gen_ai.choice.
    provider, exporter = span_exporter
    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    instrumentor = OpenLLMetryInstrumentor(use_attributes=False)
    with (
        instrumented(instrumentor, tracer_provider=provider, logger_provider=logger_provider),
        recorded_upstream(weather_script(), tmp_path / "recorded") as proxy,
    ):
        chat_agent(proxy.url + "/v1")
    events = {log.log_record.event_name for log in logs.get_finished_logs()}
    assert {"gen_ai.user.message", "gen_ai.tool.message", "gen_ai.choice"} <= events
    assert not any("gen_ai.input.messages" in (span.attributes or {}) for span in exporter.get_finished_spans())
    (tmp_path / "spans.jsonl").write_bytes(otlp_json(exporter.get_finished_spans(), logs.get_finished_logs()))
    assert_same_session(tmp_path / "spans.jsonl", tmp_path / "recorded", tmp_path)


def test_own_export_reads_back_to_identical_analysis(tmp_path: Path) -> None:
    recordings, cases = ROOT / "recordings", ROOT / "cases"
    spans, out = tmp_path / "spans.json", tmp_path / "imported"
    exported = CliRunner().invoke(cli, ["export", "otel", str(recordings), "--with-content", "--out", str(spans)])
    assert exported.exit_code == 0, exported.output
    result = import_command("otel", str(spans), "--out", str(out))
    assert result.exit_code == 0, result.output
    # The judge's kept verdicts are found beside the recordings; the imported copies are elsewhere.
    judged = ["--judge-store", str(recordings / "judge")]
    before, after = analyze_json(recordings, cases=cases), analyze_json(out, cases=cases, options=judged)

    def by_id(document: dict[str, Any]) -> dict[str, Any]:
        where = ("source", "trace_file")  # the file each was read from
        return {entry["trace_id"]: {k: v for k, v in entry.items() if k not in where} for entry in document["traces"]}

    assert len(before["traces"]) > 100
    assert by_id(after) == by_id(before)
    # The summary too; its lists follow the order the files were read in (two folders, then one).
    assert unordered(after["summary"]) == unordered(before["summary"])


def unordered(value: Any) -> Any:
    """``value`` with every list sorted, so that two documents differing only in order compare equal."""
    if isinstance(value, dict):
        return {key: unordered(item) for key, item in value.items()}
    if isinstance(value, list):
        items = [unordered(item) for item in value]
        return sorted(items, key=lambda item: orjson.dumps(item, option=orjson.OPT_SORT_KEYS))
    return value


def test_without_content_the_trace_says_what_is_missing(tmp_path: Path) -> None:
    source = ROOT / "recordings" / "flawed" / "B2-FR-01__A__r0.jsonl"
    spans = tmp_path / "spans.json"
    assert CliRunner().invoke(cli, ["export", "otel", str(source), "--out", str(spans)]).exit_code == 0
    problems: list[str] = []
    [imported] = import_otel([spans], problems)
    assert problems == []
    [path] = write_traces([imported], tmp_path / "out")
    trace, original = load_trace(path), load_trace(source)
    assert [c.name for c in trace.calls()] == [c.name for c in original.calls()]
    assert trace.stats() == original.stats()
    notes = trace.header.meta["problems"]
    assert any("messages sent were not recorded" in note for note in notes)
    assert any("result of taobao_search_products was not recorded" in note for note in notes)
    assert [str(p).split(": ", 1)[1] for p in trace.problems] == notes, "analyze reports them as the trace's problems"


def test_malformed_input_names_file_and_position_and_imports_the_rest(tmp_path: Path) -> None:
    documents = []
    for name in ("B2-FR-01__A__r0", "B2-FR-02__A__r0"):
        source, target = ROOT / "recordings" / "flawed" / f"{name}.jsonl", tmp_path / f"{name}.json"
        exported = CliRunner().invoke(cli, ["export", "otel", str(source), "--with-content", "--out", str(target)])
        assert exported.exit_code == 0, exported.output
        documents.append(orjson.loads(target.read_bytes()))
    broken_span = documents[1]["resourceSpans"][0]["scopeSpans"][0]["spans"][2]
    del broken_span["traceId"]
    lines = [orjson.dumps(documents[0]), b'{"resourceSpans": [', orjson.dumps(documents[1])]
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")

    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["import", "otel", str(path), "--out", str(out)])
    assert result.exit_code == 2, "unreadable input is bad input, after the rest is written"
    assert f"{path}:2: not valid JSON" in result.output
    assert f"{path}:3: resourceSpans[0].scopeSpans[0].spans[2]: traceId" in result.output
    traces = {load_trace(p).header.trace_id: load_trace(p) for p in trace_files([out])}
    assert sorted(traces) == ["B2-FR-01__A__r0@scripted:flawed", "B2-FR-02__A__r0@scripted:flawed"]
    assert traces["B2-FR-01__A__r0@scripted:flawed"].problems == []
