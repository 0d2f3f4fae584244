"""Hostile trace files: random bytes, truncation anywhere, wrong types in any field, huge and deep lines,
a newer format. Readers report bad lines as ``ReadProblem`` (file and line) and go on; the only exception is
``TraceFormatError`` for a file with nothing readable or a newer format. ``tracekit analyze`` and
``tracekit show`` on such files exit 0 or 2, never with a traceback.

The valid trace is made in code below (one tool-using turn, Chinese text), written with ``write_trace``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracekit.cli.main import cli
from tracekit.errors import NotATraceError, TraceFormatError
from tracekit.redact import Redactor
from tracekit.trace import (
    FORMAT_VERSION,
    AssistantMessage,
    Header,
    ModelCall,
    ToolCall,
    ToolResult,
    Trace,
    Usage,
    UserMessage,
    load_trace,
    write_trace,
)

#: Lines that are JSON but not records (a huge integer, a record of an unknown kind, wrong shapes).
ODD_LINES = [
    b"{}",
    b"[]",
    b"null",
    b'{"kind": 3}',
    b'{"kind": "user_message", "message_index": 99999999999999999999999}',
    b'{"kind": "no_such_kind"}',
    b'{"kind": "header", "format": "1"}',
    b"\xff\xfe{}",
    b'{"kind": "model_call"}',
]
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# fmt: off
RECORDS = [
    Header(trace_id="hostile-0001", provider="anthropic", model="claude-test", source="test:hostile"),
    UserMessage(message_index=0, content="帮我查一下明天北京到上海的机票", t=1.0),
    ModelCall(index=0, provider="anthropic", model="claude-test", status=200, latency_ms=12.5,
              usage=Usage(input_tokens=30, output_tokens=12), stop_reason="tool_use", t=2.0),
    AssistantMessage(message_index=1, model_call=0, stop_reason="tool_use", t=2.0, content=[
        {"type": "text", "text": "我查一下。"},
        {"type": "tool_use", "id": "tu_1", "name": "search_flights", "input": {"from": "北京", "to": "上海"}},
    ]),
    ToolCall(index=0, id="tu_1", name="search_flights", input={"from": "北京", "to": "上海"}, message_index=1,
             model_call=0, t=2.1),
    ToolResult(call_index=0, tool_use_id="tu_1", name="search_flights", content='{"flights": ["MU5101"]}',
               message_index=2, t=2.2),
    ModelCall(index=1, provider="anthropic", model="claude-test", status=200, latency_ms=9.0, t=3.0),
    AssistantMessage(message_index=3, model_call=1, content=[{"type": "text", "text": "有 MU5101。"}], t=3.0),
]
# fmt: on


@pytest.fixture(scope="module")
def valid_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = write_trace(tmp_path_factory.mktemp("valid") / "valid.jsonl", RECORDS, redactor=Redactor())
    assert load_trace(path).problems == []
    return path.read_bytes()


def _read(path: Path) -> Trace | None:
    """load_trace, allowing only TraceFormatError (which must name the file); every problem names file:line."""
    try:
        trace = load_trace(path)
    except TraceFormatError as exc:
        assert str(path) in str(exc), f"the error does not name the file: {exc}"
        return None
    for problem in trace.problems:
        assert problem.path == str(path) and problem.line >= 1 and problem.message
        assert re.match(rf"^{re.escape(str(path))}:\d+: \S", str(problem))
    return trace


def _cli_survives(*args: str) -> None:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code in (0, 2), f"exit {result.exit_code}: {result.output[-800:]}"
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), repr(result.exception)


@FUZZ
@given(data=st.binary(max_size=2000))
def test_random_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "random.jsonl"
    path.write_bytes(data)
    _read(path)


@FUZZ
@given(lines=st.lists(st.binary(max_size=200) | st.sampled_from(ODD_LINES), max_size=8))
def test_random_lines_after_a_valid_header(tmp_path: Path, valid_bytes: bytes, lines: list[bytes]) -> None:
    path = tmp_path / "lines.jsonl"
    header = valid_bytes.splitlines()[0]
    path.write_bytes(b"\n".join([header, *(line.replace(b"\n", b" ") for line in lines)]) + b"\n")
    trace = _read(path)
    assert trace is not None and trace.header.trace_id == "hostile-0001"


@FUZZ
@given(cut=st.integers(min_value=0))
def test_truncation_anywhere_keeps_every_whole_record(tmp_path: Path, valid_bytes: bytes, cut: int) -> None:
    cut %= len(valid_bytes) + 1
    path = tmp_path / "cut.jsonl"
    path.write_bytes(valid_bytes[:cut])
    trace = _read(path)
    whole_lines = valid_bytes[:cut].count(b"\n")
    if whole_lines == 0:
        return  # the header itself was cut (or nothing is left): TraceFormatError or a made-up header
    assert trace is not None
    torn = valid_bytes[:cut].split(b"\n")[-1]
    if torn == valid_bytes.split(b"\n")[whole_lines]:
        whole_lines += 1  # only the newline was cut: the last record is whole
    assert [r.model_dump() for r in trace.records] == [r.model_dump() for r in RECORDS[1:whole_lines]]
    assert len(trace.problems) <= 1
    if trace.problems:
        assert trace.problems[0].line == whole_lines + 1 and torn
        assert "torn" in trace.problems[0].message


def _field_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in items:
        found.append((*prefix, key))
        found.extend(_field_paths(child, (*prefix, key)))
    return found


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)


@FUZZ
@given(line=st.integers(min_value=1, max_value=len(RECORDS) - 1), choice=st.integers(min_value=0), value=json_values)
def test_a_wrong_value_in_any_field_is_a_problem_on_that_line(
    tmp_path: Path, valid_bytes: bytes, line: int, choice: int, value: Any
) -> None:
    lines = valid_bytes.splitlines()
    record = orjson.loads(lines[line])
    paths = _field_paths(record)
    target = paths[choice % len(paths)]
    holder = record
    for step in target[:-1]:
        holder = holder[step]
    holder[target[-1]] = value
    lines[line] = orjson.dumps(record)
    path = tmp_path / "typed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    trace = _read(path)
    assert trace is not None
    assert all(problem.line == line + 1 for problem in trace.problems)
    assert len(trace.records) + len(trace.problems) == len(RECORDS) - 1


def test_huge_and_deep_lines(tmp_path: Path, valid_bytes: bytes) -> None:
    header, *rest = valid_bytes.splitlines()
    huge_text = orjson.dumps({"kind": "user_message", "message_index": 9, "content": "长" * 5_000_000})
    huge_garbage = b"{" + b"x" * 20_000_000
    deep = b'{"kind": "user_message", "message_index": 9, "content": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    path = tmp_path / "huge.jsonl"
    path.write_bytes(b"\n".join([header, huge_text, huge_garbage, deep, *rest]) + b"\n")
    trace = _read(path)
    assert trace is not None
    assert [p.line for p in trace.problems] == [3, 4]
    assert trace.records[0].content == "长" * 5_000_000
    assert len(trace.records) == len(RECORDS)


def test_a_newer_format_is_refused_by_name(tmp_path: Path, valid_bytes: bytes) -> None:
    header, *rest = valid_bytes.splitlines()
    newer = orjson.loads(header)
    newer["format"] = FORMAT_VERSION + 1
    path = tmp_path / "newer.jsonl"
    path.write_bytes(b"\n".join([orjson.dumps(newer), *rest]) + b"\n")
    with pytest.raises(TraceFormatError, match=re.escape(str(path))):
        load_trace(path)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=500), cut=st.integers(min_value=0))
def test_analyze_and_show_exit_0_or_2_on_hostile_files(
    tmp_path: Path, valid_bytes: bytes, data: bytes, cut: int
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir(exist_ok=True)
    (folder / "random.jsonl").write_bytes(data)
    (folder / "cut.jsonl").write_bytes(valid_bytes[: cut % (len(valid_bytes) + 1)])
    (folder / "valid.jsonl").write_bytes(valid_bytes)
    _cli_survives("analyze", str(folder), "--json", str(tmp_path / "results.json"), "--no-progress")
    for name in ("random.jsonl", "cut.jsonl"):
        _cli_survives("show", str(folder / name))


@FUZZ
@given(choice=st.integers(min_value=0), value=json_values)
def test_a_wrong_value_in_a_header_field_is_refused_by_line_1_and_field_on_both_read_paths(
    tmp_path: Path, valid_bytes: bytes, choice: int, value: Any
) -> None:
    header_line, *rest = valid_bytes.splitlines()
    header = orjson.loads(header_line)
    fields = sorted(key for key in header if key != "kind")
    field = fields[choice % len(fields)]
    header[field] = value
    path = tmp_path / "header.jsonl"
    path.write_bytes(b"\n".join([orjson.dumps(header), *rest]) + b"\n")
    for fast in (False, True):
        try:
            trace = load_trace(path, fast=fast)
        except TraceFormatError as exc:
            assert not isinstance(exc, NotATraceError)
            assert str(exc).startswith(f"{path}:1: ") and field in str(exc), str(exc)
            continue
        assert trace.header.kind == "header" and len(trace.records) == len(RECORDS) - 1
        assert trace.problems == []


def test_one_bad_file_among_good_ones_is_named_and_the_others_analyzed(tmp_path: Path, valid_bytes: bytes) -> None:
    """The attacks of issue 14: a wrong-typed header field, a 10k-deep tool input, a JSON file that is not a
    trace. Each is one line on stderr naming the file (and line), the valid trace is still analyzed, exit 2."""
    folder = tmp_path / "traces"
    folder.mkdir()
    header, *rest = valid_bytes.splitlines()
    (folder / "a-valid.jsonl").write_bytes(valid_bytes)
    null_id = orjson.loads(header) | {"trace_id": None}
    (folder / "b-null-id.jsonl").write_bytes(b"\n".join([orjson.dumps(null_id), *rest]) + b"\n")
    negative = orjson.loads(header) | {"format": -1}
    (folder / "c-format.jsonl").write_bytes(b"\n".join([orjson.dumps(negative), *rest]) + b"\n")
    deep = b'{"kind":"tool_call","index":1,"name":"x","message_index":9,"input":' + b"[" * 10_000 + b"]" * 10_000 + b"}"
    (folder / "d-deep.jsonl").write_bytes(b"\n".join([header, deep, *rest]) + b"\n")
    (folder / "e-other.jsonl").write_bytes(orjson.dumps({"results": [1, 2, 3]}) + b"\n")
    result = CliRunner().invoke(cli, ["analyze", str(folder), "--json", str(tmp_path / "out.json"), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    for name, where in [("b-null-id", ":1: invalid trace header: field trace_id"),
                        ("c-format", ":1: invalid trace header: field format"),
                        ("d-deep", ":2: tool_call.input: nested deeper than 1024 levels"),
                        ("e-other", ": not a trace but a JSON object with keys results")]:  # fmt: skip
        assert f"{folder / name}.jsonl{where}" in result.output
    traces = orjson.loads((tmp_path / "out.json").read_bytes())["traces"]
    assert [Path(trace["source"]).name for trace in traces] == ["a-valid.jsonl", "d-deep.jsonl"]
    for name in ("b-null-id", "c-format", "e-other"):
        shown = CliRunner().invoke(cli, ["show", str(folder / f"{name}.jsonl")])
        assert shown.exit_code == 2 and len(shown.output.splitlines()) == 1, shown.output
