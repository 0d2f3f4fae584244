"""Trace files: writing, reading back, damaged lines, formats."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracekit.errors import NotATraceError, TraceFormatError, TracekitError
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
from tracekit.trace import io as trace_io


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


# -- files that are not traces, headers that cannot be used, values nested too deep (issue 14) -------------

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


@pytest.mark.parametrize(
    ("field", "value"),
    [("trace_id", None), ("trace_id", 7), ("format", -1), ("format", "1"), ("format", True), ("version", -3)],
)
def test_a_header_field_of_the_wrong_type_is_refused_by_file_line_and_field(
    tmp_path: Path, fast: bool, field: str, value: object
) -> None:
    path = tmp_path / "header.jsonl"
    header = {"kind": "header", "format": FORMAT_VERSION, "trace_id": "t-1"}
    if field == "version":
        del header["format"]
    header[field] = value
    records = [orjson.dumps(r.model_dump(mode="json")) for r in sample_records()[1:]]
    path.write_bytes(b"\n".join([orjson.dumps(header), *records]) + b"\n")
    with pytest.raises(TraceFormatError) as caught:
        load_trace(path, fast=fast)
    assert not isinstance(caught.value, NotATraceError)
    assert str(caught.value).startswith(f"{path}:1: invalid trace header: field {field}: ")


@pytest.mark.parametrize("shape", ["list", "object"])
def test_a_value_nested_10000_deep_is_a_problem_naming_line_and_field(tmp_path: Path, fast: bool, shape: str) -> None:
    opened, closed = (b"[" * 10_000, b"]" * 10_000) if shape == "list" else (b'{"a":' * 10_000, b"1" + b"}" * 10_000)
    deep = b'{"kind":"tool_call","index":1,"name":"x","message_index":3,"input":' + opened + closed + b"}"
    lines = [orjson.dumps(r.model_dump(mode="json")) for r in sample_records()]
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"\n".join([*lines, deep, lines[-1]]) + b"\n")
    trace = load_trace(path, fast=fast)
    [problem] = trace.problems
    assert problem.line == 6 and problem.message.startswith("tool_call.input: nested deeper than 1024 levels")
    assert len(trace.records) == len(lines)  # the lines before and after it are read


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", ": not a trace: the file is empty"),
        (b'{"hello": "world"}\n', ": not a trace but a JSON object with keys hello; a trace is JSONL"),
        (b'[\n  {"role": "user", "content": "hi"}\n]\n', ": not a trace but a JSON list of chat messages"),
        (b'{"a": 1}\n{"a": 2}\n', ":1: not a trace: the first line is a JSON object with keys a, not a record"),
        (b"\x00\x01binary\n\xff\n", ": not a trace: no line of it is a trace record (line 1: not JSON"),
    ],
    ids=["empty", "json-object", "pretty-json-list", "jsonl-of-other-things", "binary"],
)
def test_a_file_that_is_not_a_trace_is_refused_saying_so(
    tmp_path: Path, fast: bool, content: bytes, expected: str
) -> None:
    path = tmp_path / "other.json"
    path.write_bytes(content)
    with pytest.raises(NotATraceError) as caught:
        load_trace(path, fast=fast)
    assert str(caught.value).startswith(f"{path}{expected}")
    assert "\n" not in str(caught.value)


def test_a_tau_bench_results_file_is_not_a_trace_and_the_message_names_the_import(fast: bool) -> None:
    path = SHARED / "data" / "tau-bench" / "gpt-4o-airline.json"
    if not path.is_file():
        pytest.skip(f"the shared tau-bench data is not here ({path})")
    with pytest.raises(NotATraceError) as caught:
        load_trace(path, fast=fast)
    message = str(caught.value)
    assert message.startswith(f"{path}: not a trace but a tau-bench results file")
    assert message.endswith(f"tracekit import tau-bench {path} --out DIR")


# -- streaming: memory holds the records and one chunk of the file, never all of its bytes ------------------


def _long_trace(path: Path, calls: int) -> Path:
    records: list = [Header(trace_id="long", source="test")]
    for index in range(calls):
        records.append(ToolCall(index=index, name="search", input={"q": f"第{index}页"}, message_index=2 * index + 1))
        records.append(ToolResult(call_index=index, content="结果 " * 5, message_index=2 * index + 2))
    return write_trace(path, records)


@pytest.mark.parametrize("chunk", [64, 333, 1 << 16])
def test_a_file_read_in_chunks_gives_what_a_whole_read_gives(
    tmp_path: Path, fast: bool, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _long_trace(tmp_path / "long.jsonl", 400)
    whole = load_trace(path, fast=fast)
    assert whole.problems == []
    monkeypatch.setattr(trace_io, "CHUNK_BYTES", chunk)
    chunked = load_trace(path, fast=fast)
    assert [r.kind for r in chunked.records] == [r.kind for r in whole.records]
    assert [c.input for c in chunked.calls()] == [c.input for c in whole.calls()]
    assert chunked.problems == [] and type(chunked.records[0]) is type(whole.records[0])
    # A torn last line and a bad line in the middle are still found, on the same lines, across chunk ends.
    data = path.read_bytes()
    lines = data.split(b"\n")
    lines[300] = b'{"kind":"tool_call","index":"x"'
    path.write_bytes(b"\n".join(lines) + b'{"kind":"tool_res')
    monkeypatch.setattr(trace_io, "CHUNK_BYTES", 1 << 30)
    expected = [(p.line, p.message) for p in load_trace(path, fast=fast).problems]
    monkeypatch.setattr(trace_io, "CHUNK_BYTES", chunk)
    assert [(p.line, p.message) for p in load_trace(path, fast=fast).problems] == expected
    assert [line for line, _ in expected] == [301, 802]


def test_reading_holds_one_chunk_of_the_file_not_all_its_bytes(
    tmp_path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Peak memory while reading, beyond what the loaded trace keeps, stays within a few chunks."""
    path = _long_trace(tmp_path / "long.jsonl", 3000)
    size = path.stat().st_size
    chunk = 16 * 1024
    monkeypatch.setattr(trace_io, "CHUNK_BYTES", chunk)
    assert size > 40 * chunk
    load_trace(path, fast=fast)  # warm: imports, caches
    tracemalloc.start()
    try:
        trace = load_trace(path, fast=fast)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(trace.records) == 6000
    assert peak - kept < 8 * chunk, f"read {size} bytes with {peak - kept} bytes more than the trace keeps"
