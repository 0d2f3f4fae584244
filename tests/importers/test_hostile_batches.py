"""Hostile files in a batch with a good one (issue 27, C): a real inspect_ai ``.eval`` log rewritten into
damaged and hostile zips, OTLP and Agents SDK documents of the wrong shape, JSON nested past what a trace can
hold, ids too long for a file name and a ``--domain`` that is a path. Each is a problem naming the file, the
good log is still imported, nothing is written outside ``--out``, and ``tracekit import`` exits 2 without a
traceback (nothing written: an error saying so)."""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from inspect_ai import eval as inspect_eval
from test_inspect_importer import mock_model, weather_task

from tracekit.cli import cli
from tracekit.importers import eval_zip, import_inspect, import_tau_bench, write_traces
from tracekit.importers.common import MAX_NAME_BYTES, safe_name
from tracekit.importers.eval_zip import read_entry
from tracekit.trace import load_trace, trace_files


@pytest.fixture(scope="module")
def good_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inspect")
    [log] = inspect_eval(weather_task("北京天气？"), model=mock_model(), log_dir=str(folder), display="none")
    assert log.status == "success", log.error
    return Path(log.location)


def _rewritten(good: Path, target: Path, change: Callable[[str, bytes], bytes | None], method: int) -> Path:
    """``good``'s entries written again to ``target`` (each through ``change``; None leaves it out)."""
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(target, "w", compression=method) as out:
        for info in source.infolist():
            with open(good, "rb") as raw:
                data = change(info.filename, read_entry(source, raw, info))
            if data is not None:
                out.writestr(info.filename, data)
    return target


def _patch_central(path: Path, offset_in_entry: int, value: bytes) -> None:
    """Overwrite bytes of every central directory entry of ``path`` (at ``offset_in_entry`` of each)."""
    data = bytearray(path.read_bytes())
    start = 0
    while (start := data.find(b"PK\x01\x02", start)) != -1:
        data[start + offset_in_entry : start + offset_in_entry + len(value)] = value
        start += 4
    path.write_bytes(bytes(data))


def bad_crc(good: Path, target: Path) -> Path:
    _rewritten(good, target, lambda _n, d: d, zipfile.ZIP_STORED)
    _patch_central(target, 16, b"\x00\x00\x00\x00")  # CRC-32 of each entry
    return target


def encrypted(good: Path, target: Path) -> Path:
    _rewritten(good, target, lambda _n, d: d, zipfile.ZIP_DEFLATED)
    _patch_central(target, 8, struct.pack("<H", 1))  # general purpose flag: encrypted
    return target


def patched_data(good: Path, target: Path) -> Path:
    _rewritten(good, target, lambda _n, d: d, zipfile.ZIP_DEFLATED)
    _patch_central(target, 8, struct.pack("<H", 0x20))  # general purpose flag: compressed patched data
    return target


def unknown_method(good: Path, target: Path) -> Path:
    _rewritten(good, target, lambda _n, d: d, zipfile.ZIP_STORED)
    _patch_central(target, 10, struct.pack("<H", 77))  # compression method 77
    return target


def header_a_list(good: Path, target: Path) -> Path:
    return _rewritten(good, target, lambda n, d: b"[]" if n == "header.json" else d, zipfile.ZIP_DEFLATED)


def overlapping(good: Path, target: Path) -> Path:
    """Every entry's directory record points at the first entry's data (the overlapping-files zip bomb)."""
    _rewritten(good, target, lambda _n, d: d, zipfile.ZIP_STORED)
    _patch_central(target, 42, struct.pack("<I", 0))  # relative offset of local header
    return target


def inflating(good: Path, target: Path) -> Path:
    """A sample entry that inflates past the limit (deflated zeros: 1 kB per MB)."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as out:
        with zipfile.ZipFile(good) as source:
            out.writestr("header.json", source.read("header.json") if "header.json" in source.namelist() else "{}")
        with out.open("samples/1_epoch_1.json", "w", force_zip64=True) as entry:
            block = b"0" * 2**20
            for _ in range(eval_zip.MAX_ENTRY_BYTES // len(block) + 1):
                entry.write(block)
    return target


HOSTILE = {
    "bad_crc": bad_crc, "encrypted": encrypted, "unknown_method": unknown_method, "header_a_list": header_a_list,
    "overlapping": overlapping, "patched_data": patched_data,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_eval_zip_is_named_and_the_good_log_still_imported(good_log: Path, tmp_path: Path, name: str) -> None:
    hostile = HOSTILE[name](good_log, tmp_path / f"{name}.eval")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["import", "inspect", str(good_log), str(hostile), "--out", str(out)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert f"{name}.eval" in result.output
    traces = [load_trace(path) for path in trace_files([out])]
    good = [t for t in traces if str(good_log) in str(t.header.meta.get("log"))]
    assert len(good) == 1 and good[0].final_answer() == "结果：晴", result.output
    if name != "header_a_list":  # a header of the wrong type leaves the samples readable
        assert result.exit_code == 2, result.output
        assert len(traces) == 1


def test_decompression_is_bounded(good_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eval_zip, "MAX_ENTRY_BYTES", 8 * 2**20)  # the same code path, a smaller bound
    bomb = inflating(good_log, tmp_path / "bomb.eval")
    assert bomb.stat().st_size < 2**20 // 4
    problems: list[str] = []
    traces = import_inspect([good_log, bomb], problems)
    assert len(traces) == 1
    assert any("bomb.eval:samples/1_epoch_1.json" in p and "more than the limit" in p for p in problems), problems


@pytest.mark.parametrize("levels", [200, 300, 1020])
@pytest.mark.parametrize("fmt", ["otel", "openinference", "openai-agents", "inspect", "openai-messages"])
def test_deeply_nested_json_is_a_problem_not_a_traceback(tmp_path: Path, fmt: str, levels: int) -> None:
    deep = b"[" * levels + b"]" * levels
    documents = {
        "otel": b'{"resourceSpans": [{"scopeSpans": [{"spans": [' + deep + b"]}]}]}",
        "openinference": b'{"resourceSpans": [{"scopeSpans": [{"spans": [' + deep + b"]}]}]}",
        "openai-agents": b'{"data": [{"object": "trace", "id": "t", "metadata": ' + deep + b"}]}",
        "inspect": b'{"eval": {}, "samples": [{"id": 1, "metadata": ' + deep + b"}]}",
        "openai-messages": b'[{"role": "user", "content": "hi", "x": ' + deep + b"}]",
    }
    path = tmp_path / "deep.json"
    path.write_bytes(documents[fmt])
    result = CliRunner().invoke(cli, ["import", fmt, str(path), "--out", str(tmp_path / "out")])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("fmt", "document", "where"),
    [
        ("otel", {"resourceSpans": [None]}, "resourceSpans[0]: expected an object"),
        ("openinference", {"resourceSpans": [{"scopeSpans": ["x"]}]}, "scopeSpans[0]: expected an object"),
        ("openai-agents", {"data": [{"object": "trace", "id": "t1", "group_id": []}]}, "group_id"),
    ],
)
def test_wrong_types_named_by_file_and_field(tmp_path: Path, fmt: str, document: object, where: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(orjson.dumps(document))
    result = CliRunner().invoke(cli, ["import", fmt, str(path), "--out", str(tmp_path / "out")])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert str(path) in result.output and where in result.output, result.output


def test_domain_cannot_escape_out(tmp_path: Path) -> None:
    path = tmp_path / "gpt-4o-airline.json"
    path.write_bytes(orjson.dumps([{"task_id": 1, "trial": 0, "traj": [{"role": "user", "content": "hi"}]}]))
    out = tmp_path / "deep" / "out"
    result = CliRunner().invoke(cli, ["import", "tau-bench", str(path), "--domain", "../..", "--out", str(out)])
    assert result.exit_code == 2 and "--domain" in result.output
    # the library call has no option check: the file name is made safe where it is written
    [written] = write_traces(import_tau_bench(path, domain="../../x"), out)
    assert written.parent == out
    assert sorted(p.name for p in tmp_path.rglob("*.jsonl")) == [written.name]


def test_long_ids_give_safe_unique_stable_names(tmp_path: Path) -> None:
    entries = [{"task_id": 1, "trial": t, "traj": [{"role": "user", "content": "hi"}]} for t in range(2)]
    path = tmp_path / "x.json"
    path.write_bytes(orjson.dumps(entries))
    traces = import_tau_bench(path, domain="d" * 400)
    first = write_traces(traces, tmp_path / "out")
    again = write_traces(import_tau_bench(path, domain="d" * 400), tmp_path / "again")
    assert [p.name for p in first] == [p.name for p in again]
    assert len({p.name for p in first}) == 2
    assert all(len(p.name.encode()) <= MAX_NAME_BYTES + len(".jsonl") for p in first)
    assert [load_trace(p).header.trace_id for p in first] == [t.trace_id for t in traces]
    assert safe_name("北京" * 200) != safe_name("北京" * 201)
