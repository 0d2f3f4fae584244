"""What analysis keeps of a trace's records (issue 31 item 4): the bodies it never reads are let go as the file
is read, the entries stay the same, and a case library that hands the trace to an installed check keeps
every record whole. Memory is measured with tracemalloc, never timed."""

from __future__ import annotations

import gc
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from tracekit.analyze.entry import AnalyzeSettings, analyze_trace
from tracekit.analyze.reading import load_for_analysis, may_slim
from tracekit.application import load_case_set
from tracekit.trace import io, load_trace, trace_files

ROOT = Path(__file__).resolve().parents[2]
TOOLS = [{"name": "get_weather", "description": "weather",
          "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]


def proxy_shaped_trace(path: Path, turns: int, body: str) -> int:
    """A trace as the proxy writes one: each turn a model call keeping its request (the conversation so far,
    the tools) and its response, the reply, a call and its result. Returns the bytes of bodies written."""
    records: list[dict[str, Any]] = [{"kind": "header", "format": 1, "trace_id": "t", "source": "proxy"}]
    bodies = 0
    for turn in range(turns):
        message = 2 * turn + 1
        city = {"city": "北京"} if turn % 3 else {"town": 7}  # every third call breaks the declared schema
        reply = [{"type": "tool_use", "id": f"c{turn}", "name": "get_weather", "input": city}]
        request = {"model": "m", "tools": TOOLS, "messages": [{"role": "user", "content": body}] * 2}
        response = {"id": f"msg_{turn}", "content": reply, "stop_reason": "tool_use", "padding": body}
        bodies += len(orjson.dumps(request)) + len(orjson.dumps(response)) + len(orjson.dumps(body))
        records += [
            {"kind": "model_call", "index": turn, "provider": "anthropic", "model": "m", "request": request,
             "response": response, "usage": {"input_tokens": 10, "output_tokens": 2}, "sse": body},
            {"kind": "assistant_message", "message_index": message, "content": reply, "model_call": turn},
            {"kind": "tool_call", "index": turn, "message_index": message, "name": "get_weather", "input": city,
             "id": f"c{turn}", "model_call": turn},
            {"kind": "tool_result", "call_index": turn, "message_index": message + 1, "id": f"c{turn}",
             "content": "晴" if turn % 5 else "error: no such city", "is_error": turn % 5 == 0},
        ]
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return bodies


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files read in chunks of 4 kB instead of CHUNK_BYTES (4 MiB), so that a test-sized file spans several
    and its records are slimmed (a file of one chunk is kept whole)."""
    monkeypatch.setattr(io, "CHUNK_BYTES", 4096)


@pytest.mark.usefixtures("small_chunks")
def test_every_recording_analyzes_to_the_same_entry_with_its_bodies_let_go() -> None:
    files = trace_files([ROOT / "recordings"])
    assert len(files) > 100
    for path in files:
        whole = analyze_trace(load_trace(path, fast=True)).to_json_bytes()
        assert analyze_trace(load_for_analysis(path, AnalyzeSettings())).to_json_bytes() == whole, path


@pytest.mark.usefixtures("small_chunks")
def test_schema_findings_and_stats_are_the_same_from_slimmed_requests(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    proxy_shaped_trace(path, 30, "天气 " * 100)
    whole = analyze_trace(load_trace(path, fast=True))
    loaded = load_for_analysis(path, AnalyzeSettings())
    assert all(call.response is None for call in loaded.kind("model_call"))
    slimmed = analyze_trace(loaded)
    assert any(finding.kind == "schema_violation" for finding in whole.findings)
    assert slimmed.to_json_bytes() == whole.to_json_bytes()


def test_the_bodies_are_let_go_as_the_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Files are read in chunks of CHUNK_BYTES (4 MiB): smaller here, so that a test-sized file spans many.
    monkeypatch.setattr(io, "CHUNK_BYTES", 64 * 1024)
    path = tmp_path / "trace.jsonl"
    bodies = proxy_shaped_trace(path, 200, "天气 weather " * 300)
    assert bodies > 0.9 * path.stat().st_size

    def held(load: Any) -> tuple[int, int]:
        load(path)  # imports and caches warmed up: the read itself is measured
        gc.collect()
        tracemalloc.start()
        try:
            trace = load(path)
            current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(trace.records) == 800
        return current, peak

    whole, _ = held(lambda where: load_trace(where, fast=True))
    slimmed, peak = held(lambda where: load_for_analysis(where, AnalyzeSettings()))
    assert whole > bodies  # what the reader kept before: every body, decoded
    assert slimmed < bodies / 5, (slimmed, bodies)  # the messages, calls and results: a few hundred bytes each
    assert peak < path.stat().st_size / 4, (peak, path.stat().st_size)


@pytest.mark.usefixtures("small_chunks")
def test_requests_that_declare_the_same_tools_share_one_copy(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    proxy_shaped_trace(path, 3, "hi " * 600)
    calls = load_for_analysis(path, AnalyzeSettings()).kind("model_call")
    assert [call.request for call in calls] == [{"tools": TOOLS}] * 3
    assert calls[0].request["tools"] is calls[2].request["tools"]
    assert [call.response for call in calls] == [None] * 3


def test_a_file_of_one_chunk_is_kept_whole(tmp_path: Path) -> None:
    # Decoding holds one chunk's records whole anyway: slimming a small file would save no peak memory.
    path = tmp_path / "trace.jsonl"
    proxy_shaped_trace(path, 3, "hi")
    assert path.stat().st_size < io.CHUNK_BYTES
    [first, *_] = load_for_analysis(path, AnalyzeSettings()).kind("model_call")
    assert first.response["stop_reason"] == "tool_use"


@pytest.mark.usefixtures("small_chunks")
def test_a_library_that_names_an_installed_check_keeps_the_records_whole(tmp_path: Path) -> None:
    # A check from an installed package is handed the whole trace: it may read a response.
    cases = tmp_path / "cases"
    shutil.copytree(ROOT / "cases", cases)
    named = cases / "b2" / "B2-PC-01.yaml"
    text = named.read_text(encoding="utf-8").replace("\nexpect:\n", "\nexpect:\n  checks: [{name: reads_responses}]\n")
    named.write_text(text, encoding="utf-8")
    assert may_slim(AnalyzeSettings(library=load_case_set(ROOT / "cases")))
    naming = AnalyzeSettings(library=load_case_set(cases))
    assert not may_slim(naming)
    path = tmp_path / "trace.jsonl"
    proxy_shaped_trace(path, 4, "hi " * 600)
    [first, *_] = load_for_analysis(path, naming).kind("model_call")
    assert first.response["stop_reason"] == "tool_use"
    assert first.request["messages"]
