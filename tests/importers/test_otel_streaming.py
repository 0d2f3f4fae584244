"""import otel in bounded memory (issue 31 item 4): the spans are read a document at a time, what a span carries
waits on disk until its session is built, and the command writes each trace before it builds the next.

The spans are made by the OpenTelemetry SDK (a tracer and a logger provider, exported by the SDK's own OTLP
encoder, one document a line as a collector's file exporter writes them); nothing here is timed."""

from __future__ import annotations

import gc
import json
import pickle
import tracemalloc
import weakref
from pathlib import Path
from typing import Any

import opentelemetry._logs as otel_logs
import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from producer_support import import_command, otlp_json

from tracekit.importers import otel
from tracekit.importers.common import ImportedTrace
from tracekit.importers.otel import import_otel, stream_otel
from tracekit.importers.otel_sessions import MISSING
from tracekit.trace import io, load_trace, trace_files


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}], ensure_ascii=False)


def sessions_as_lines(count: int, text: str) -> bytes:
    """``count`` sessions of one chat call each (the conversation ``text`` plus its number), one OTLP JSON line
    a session, made by the SDK."""
    lines = []
    for number in range(count):
        provider, exporter = TracerProvider(), InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                      "gen_ai.request.model": "gpt-test", "gen_ai.conversation.id": f"conversation-{number}",
                      "gen_ai.input.messages": _messages("user", f"{text} {number}"),
                      "gen_ai.output.messages": _messages("assistant", f"answer {number}")}  # fmt: skip
        with provider.get_tracer("test").start_as_current_span("chat gpt-test", attributes=attributes):
            pass
        lines.append(otlp_json(exporter.get_finished_spans()))
    return b"".join(lines)


def _peak_of_import(path: Path) -> int:
    """The most memory Python held at once while ``stream_otel`` imported ``path`` (every trace taken, and let go)."""
    count = sum(1 for _trace in stream_otel([path], []))  # imports and caches warmed up: the import is measured
    gc.collect()
    tracemalloc.start()
    try:
        assert sum(1 for _trace in stream_otel([path], [])) == count
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_holds_one_document_and_one_session_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Files are read in chunks of CHUNK_BYTES (4 MiB): smaller here, so that a test-sized file spans many.
    monkeypatch.setattr(io, "CHUNK_BYTES", 64 * 1024)
    text = "天气 weather " * 2000  # about 24 KB a conversation, 43 KB a span's document
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_bytes(sessions_as_lines(40, text))
    large.write_bytes(sessions_as_lines(120, text))
    added = large.stat().st_size - small.stat().st_size
    peak_small, peak_large = _peak_of_import(small), _peak_of_import(large)
    # Holding every span (as the importer did) grows by more than the bytes added: the spans' attributes alone
    # are about that much. Streaming holds one document (parsing it costs orjson about half a megabyte, whatever
    # the file), one session, and an entry of a few hundred bytes per span.
    assert added > 3_000_000
    assert peak_large - peak_small < added / 10, (peak_small, peak_large, added)
    assert peak_large < large.stat().st_size / 2, (peak_large, large.stat().st_size)


def test_the_command_writes_each_trace_before_it_builds_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_bytes(sessions_as_lines(12, "北京天气怎么样？"))
    alive = most = 0

    def gone() -> None:
        nonlocal alive
        alive -= 1

    class Counted(ImportedTrace):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            nonlocal alive, most
            alive += 1
            most = max(most, alive)
            weakref.finalize(self, gone)

    monkeypatch.setattr(otel, "ImportedTrace", Counted)
    result = import_command("otel", str(path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert len(trace_files([tmp_path / "out"])) == 12
    # The trace being built, and at most the one just written (still named by the writing loop).
    assert 1 <= most <= 2, most


def test_log_records_before_their_spans_are_still_their_events(tmp_path: Path) -> None:
    # A log record may be exported before the span it belongs to ends (the SDK's span is exported at its end):
    # reading a document at a time must not lose the events of spans that come later in the file.
    tracer_provider, spans = TracerProvider(), InMemorySpanExporter()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider, logs = LoggerProvider(), InMemoryLogRecordExporter()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    logger = logger_provider.get_logger("test")
    attributes = {"gen_ai.system": "openai", "gen_ai.request.model": "gpt-test", "gen_ai.operation.name": "chat"}
    with tracer_provider.get_tracer("test").start_as_current_span("chat gpt-test", attributes=attributes):
        logger.emit(otel_logs.LogRecord(event_name="gen_ai.user.message", body={"content": "北京天气怎么样？"}))
        logger.emit(otel_logs.LogRecord(event_name="gen_ai.choice", body={
            "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "北京今天晴。"}}))
    spans_line, logs_line = otlp_json(spans.get_finished_spans(), logs.get_finished_logs()).splitlines()
    in_order, logs_first = tmp_path / "in-order.jsonl", tmp_path / "logs-first.jsonl"
    in_order.write_bytes(spans_line + b"\n" + logs_line + b"\n")
    logs_first.write_bytes(logs_line + b"\n" + spans_line + b"\n")

    def imported(path: Path) -> list[Any]:
        problems: list[str] = []
        [trace] = import_otel([path], problems)
        assert problems == []
        return [record.model_dump(exclude={"created", "meta"}) for record in trace.records]

    records = imported(in_order)
    assert records == imported(logs_first)
    assert [record["kind"] for record in records[1:]] == ["user_message", "model_call", "assistant_message"]
    assert records[3]["content"] == [{"type": "text", "text": "北京今天晴。"}]


def test_what_a_producer_did_not_record_stays_missing_after_waiting_on_disk() -> None:
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING


def test_an_imported_session_reads_back_as_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_bytes(sessions_as_lines(3, "北京天气怎么样？"))
    result = import_command("otel", str(path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    answers = sorted(load_trace(file).final_answer() for file in trace_files([tmp_path / "out"]))
    assert answers == ["answer 0", "answer 1", "answer 2"]
