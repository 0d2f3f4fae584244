"""Trace files: writing, reading back, damaged lines, formats."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracekit.errors import TraceFormatError, TracekitError
from tracekit.trace import (
    FORMAT_VERSION,
    Header,
    ModelCall,
    ToolCall,
    ToolResult,
    TraceWriter,
    UserMessage,
    load_trace,
    write_trace,
)


@pytest.fixture(params=[False, True], ids=["models", "mirrors"])
def fast(request: pytest.FixtureRequest) -> bool:
    """Every reading test runs on both read paths: the models and analysis's mirrors (load_trace(fast=True))."""
    return bool(request.param)


def sample_records() -> list:
    return [
        Header(trace_id="t-1", source="test", meta={"说明": "手写的样例"}),
        UserMessage(message_index=0, content="明天北京天气怎么样"),
        ModelCall(index=0, provider="anthropic", model="claude-x"),
        ToolCall(index=0, id="toolu_1", name="maps_weather", input={"city": "北京"}, message_index=1),
        ToolResult(call_index=0, tool_use_id="toolu_1", content="晴，25°C", message_index=2),
    ]


def test_round_trip_keeps_every_field_and_chinese(tmp_path: Path, fast: bool) -> None:
    path = write_trace(tmp_path / "t.jsonl", sample_records())
    assert "北京".encode() in path.read_bytes()  # UTF-8, not \\u escapes
    trace = load_trace(path, fast=fast)
    assert trace.problems == []
    assert trace.header.meta == {"说明": "手写的样例"}
    [call] = trace.calls()
    assert (call.name, call.input, call.result_text) == ("maps_weather", {"city": "北京"}, "晴，25°C")


def test_torn_last_line_is_reported_and_the_rest_read(tmp_path: Path, fast: bool) -> None:
    path = write_trace(tmp_path / "t.jsonl", sample_records())
    with open(path, "ab") as handle:
        handle.write(b'{"kind":"tool_call","index":1,"na')
    trace = load_trace(path, fast=fast)
    assert len(trace.calls()) == 1
    [problem] = trace.problems
    assert problem.line == 6 and "torn" in problem.message and str(path) in str(problem)


def test_corrupt_middle_line_and_invalid_record_are_skipped(tmp_path: Path, fast: bool) -> None:
    path = tmp_path / "t.jsonl"
    lines = [orjson.dumps(r.model_dump(mode="json")) for r in sample_records()]
    lines.insert(2, b"\x00garbage")
    lines.insert(3, b'{"kind":"tool_call","index":"not a number","name":"x","message_index":1}')
    path.write_bytes(b"\n".join(lines) + b"\n")
    trace = load_trace(path, fast=fast)
    assert [p.line for p in trace.problems] == [3, 4]
    assert "tool_call.index" in trace.problems[1].message
    assert trace.stats().tool_calls == 1


def test_newer_format_is_refused_clearly(tmp_path: Path, fast: bool) -> None:
    path = tmp_path / "new.jsonl"
    path.write_bytes(orjson.dumps({"kind": "header", "format": FORMAT_VERSION + 1, "trace_id": "x"}) + b"\n")
    with pytest.raises(TraceFormatError, match="newer than this tracekit"):
        load_trace(path, fast=fast)


def test_format_zero_is_migrated(tmp_path: Path, fast: bool) -> None:
    path = tmp_path / "old.jsonl"
    rows = [
        {"kind": "header", "version": 0, "trace_id": "old"},
        {"kind": "tool_call", "index": 0, "name": "search", "input": {}, "message_index": 0},
        {"kind": "tool_result", "call_index": 0, "content": "Error: boom", "error": True, "message_index": 1},
    ]
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    trace = load_trace(path, fast=fast)
    assert trace.header.format == FORMAT_VERSION
    assert trace.calls()[0].is_error is True


def test_missing_header_is_assumed_from_the_file_name(tmp_path: Path, fast: bool) -> None:
    path = tmp_path / "headless.jsonl"
    path.write_bytes(orjson.dumps({"kind": "user_message", "message_index": 0, "content": "hi"}) + b"\n")
    trace = load_trace(path, fast=fast)
    assert trace.trace_id == "headless"
    assert "no header" in trace.problems[0].message


def test_writer_flushes_each_record_before_close(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    writer = TraceWriter(path, fsync=True)
    writer.write(Header(trace_id="live"))
    writer.write(UserMessage(message_index=0, content="x"))
    assert path.read_bytes().count(b"\n") == 2  # readable while the writer is still open
    writer.close()


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=2000))
def test_random_bytes_only_give_documented_outcomes(tmp_path: Path, data: bytes, fast: bool) -> None:
    path = tmp_path / "random.jsonl"
    path.write_bytes(data)
    try:
        trace = load_trace(path, fast=fast)
    except TracekitError:
        return
    for problem in trace.problems:
        assert problem.line >= 1 and problem.message


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=10_000), junk=st.binary(max_size=50))
def test_truncated_files_keep_every_complete_line(tmp_path: Path, cut: int, junk: bytes, fast: bool) -> None:
    full = tmp_path / "full.jsonl"
    write_trace(full, sample_records())
    data = full.read_bytes()
    cut = min(cut, len(data))
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data[:cut] + junk)
    complete_lines = data[:cut].count(b"\n")
    try:
        trace = load_trace(path, fast=fast)
    except TracekitError:
        assert complete_lines == 0
        return
    assert len(trace.records) >= complete_lines - 1 - len(trace.problems)


def test_huge_line_is_read(tmp_path: Path, fast: bool) -> None:
    records = sample_records()
    records.append(ToolResult(call_index=None, content="长" * 2_000_000, message_index=3))
    trace = load_trace(write_trace(tmp_path / "big.jsonl", records), fast=fast)
    assert len(trace.records[-1].content) == 2_000_000
