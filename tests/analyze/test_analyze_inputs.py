"""Mistakes a user makes and hostile files (issue 14): each bad file is named with what is wrong, the other
files are still analyzed, the exit status is 2, and the results file is written whole or not at all."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli

from .factories import build_trace, call, messages_of, say, user, write

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["analyze", *args], catch_exceptions=False)


@pytest.fixture
def good(tmp_path: Path) -> Path:
    """A folder with one good trace."""
    folder = tmp_path / "traces"
    write(build_trace(messages_of([user("查一下"), call("maps_weather", {"city": "北京"}, "晴"), say("晴")]),
                      trace_id="good"), folder / "good.jsonl")  # fmt: skip
    return folder


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _write_lines(path: Path, records: list[Any]) -> None:
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))


def test_each_malformed_trace_is_named_and_the_others_analyzed(good: Path, tmp_path: Path) -> None:
    records = _lines(good / "good.jsonl")
    _write_lines(good / "null-id.jsonl", [{**records[0], "trace_id": None}, *records[1:]])
    _write_lines(good / "format.jsonl", [{**records[0], "format": -1}, *records[1:]])
    (good / "not-a-trace.jsonl").write_text('{"not": "a trace"}\n', encoding="utf-8")
    out = tmp_path / "r.json"
    result = run(str(good), "--json", str(out))
    assert result.exit_code == 2
    for name in ("null-id.jsonl:1", "format.jsonl:1", "not-a-trace.jsonl"):
        assert f"error: {good / name}" in result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert [entry["trace_id"] for entry in document["traces"]] == ["good"]
    assert document["summary"]["unreadable_files"] == 3 and len(document["problems"]) == 3


def test_a_deeply_nested_call_input_never_stops_the_folder(good: Path, tmp_path: Path) -> None:
    records = _lines(good / "good.jsonl")
    text = "[" * 10_000 + '"leaf"' + "]" * 10_000
    call_line = next(number for number, record in enumerate(records) if record.get("kind") == "tool_call")
    lines = [orjson.dumps({**record, "input": {}}).decode() if number == call_line else orjson.dumps(record).decode()
             for number, record in enumerate(records)]  # fmt: skip
    lines[call_line] = lines[call_line].replace('"input":{}', f'"input":{{"q":{text}}}')
    (good / "deep.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    result = run(str(good), "--json", str(out))
    assert f"{good / 'deep.jsonl'}:{call_line + 1}" in result.output  # named with its line
    document = json.loads(out.read_text(encoding="utf-8"))
    assert "good" in [entry["trace_id"] for entry in document["traces"]]


@pytest.mark.parametrize("depth", [300, 1000])
def test_arguments_deeper_than_tracekit_writes_name_the_limit(good: Path, tmp_path: Path, depth: int) -> None:
    # Read (orjson and msgspec read 1024 levels) but not writable (orjson writes 254): once a bare
    # "TypeError: Recursion limit reached".
    records = _lines(good / "good.jsonl")
    call_line = next(number for number, record in enumerate(records) if record.get("kind") == "tool_call")
    lines = [orjson.dumps(record).decode() for record in records]
    lines[call_line] = orjson.dumps({**records[call_line], "input": {}}).decode().replace(
        '"input":{}', '"input":' + "[" * depth + "1" + "]" * depth
    )
    (good / "deep.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    result = run(str(good), "--json", str(out))
    assert result.exit_code == 2
    assert f"error: {good / 'deep.jsonl'}: a value nested deeper than 254 levels" in result.output
    assert [entry["trace_id"] for entry in json.loads(out.read_bytes())["traces"]] == ["good"]


def test_a_file_whose_analysis_crashes_is_isolated(good: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracekit.analyze.results as results

    write(build_trace(messages_of([user("再查"), say("好")]), trace_id="boom"), good / "boom.jsonl")
    analyze_trace = results.analyze_trace

    def crashing(trace: Any, *args: Any, **kwargs: Any) -> Any:
        if trace.header.trace_id == "boom":
            raise RecursionError("maximum recursion depth exceeded")
        return analyze_trace(trace, *args, **kwargs)

    monkeypatch.setattr(results, "analyze_trace", crashing)
    out = tmp_path / "r.json"
    result = run(str(good), "--json", str(out))
    assert result.exit_code == 2
    assert f"error: {good / 'boom.jsonl'}: cannot be analyzed (a value is nested too deeply" in result.output
    assert [entry["trace_id"] for entry in json.loads(out.read_bytes())["traces"]] == ["good"]


def test_a_json_file_that_is_not_a_trace_exits_2(good: Path, tmp_path: Path) -> None:
    plain = tmp_path / "notes.json"
    plain.write_text('{"a": 1}', encoding="utf-8")
    result = run(str(plain), str(good / "good.jsonl"))
    assert result.exit_code == 2
    assert f"error: {plain}: not a trace" in result.output and "1 traces" in result.output


def test_a_tau_bench_file_says_how_to_import_it(tmp_path: Path) -> None:
    data = SHARED / "data" / "tau-bench"
    files = sorted(data.glob("*.json")) if data.is_dir() else []
    if not files:
        pytest.skip(f"no tau-bench results in {data} (../shared is not beside this clone)")
    result = run(str(files[0]))
    assert result.exit_code == 2
    assert "not a trace" in result.output and f"tracekit import tau-bench {files[0]} --out DIR" in result.output


def test_an_empty_folder_exits_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["analyze", f"{tmp_path / 'empty'}/"])
    assert result.exit_code == 2
    assert f"no trace files found in {tmp_path / 'empty'}/" in result.output


def test_a_crash_never_leaves_half_a_results_file(good: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracekit.analyze.summary import Summary

    out = tmp_path / "r.json"
    out.write_text('{"earlier": "results"}', encoding="utf-8")

    def broken(self: Summary) -> Any:
        raise RuntimeError("crashed after the traces were written")

    monkeypatch.setattr(Summary, "build", broken)
    result = CliRunner().invoke(cli, ["analyze", str(good), "--json", str(out)])
    assert isinstance(result.exception, RuntimeError)
    assert out.read_text(encoding="utf-8") == '{"earlier": "results"}'  # the old file, whole
    assert sorted(path.name for path in tmp_path.iterdir()) == ["r.json", "traces"]  # no temporary left behind


def test_one_bad_case_file_leaves_that_case_out_and_the_others_are_judged(tmp_path: Path) -> None:
    # Found in review: a case library with one broken file used to refuse the whole run (exit 2, no results),
    # so the traces of the 95 good cases went unjudged.
    repo = Path(__file__).resolve().parents[2]
    library = tmp_path / "cases"
    shutil.copytree(repo / "cases", library)
    broken = library / "b2" / "B2-PC-02.yaml"
    broken.write_text(broken.read_text(encoding="utf-8").replace("id: B2-PC-02", "id: [B2-PC-02", 1), "utf-8")
    out = tmp_path / "r.json"
    result = run(str(repo / "recordings"), "--cases", str(library), "--no-progress", "--json", str(out))
    assert result.exit_code == 2
    assert f"error: {broken}:" in result.output and "the other cases are analyzed" in result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert any(problem.startswith(f"{broken}:") for problem in document["problems"])
    by_case: dict[str | None, list[Any]] = {}
    for entry in document["traces"]:
        by_case.setdefault(entry["case_id"], []).append(entry["verdict"])
    assert by_case["B2-PC-02"] and all(verdict is None for verdict in by_case["B2-PC-02"])
    judged = [verdict for case_id, verdicts in by_case.items() if case_id != "B2-PC-02" for verdict in verdicts]
    assert len(document["traces"]) == 298 and len(judged) > 250
    assert all(verdict is not None for verdict in judged)


def test_a_jobs_pool_ends_when_the_parent_handles_sigterm() -> None:
    # Found in CI: a process with its own SIGTERM handler (Ray's, in the test session) hung at the end of
    # analyze --jobs 2: the pool's terminate() cannot kill workers that inherit the handler, and killing one
    # that holds the task queue's lock blocks the others.
    repo = Path(__file__).resolve().parents[2]
    files = sorted(str(path) for path in (repo / "recordings").rglob("*.jsonl"))[:40]
    script = (
        "import signal, sys\n"
        "signal.signal(signal.SIGTERM, lambda *_: None)\n"
        "from tracekit.analyze.results import AnalyzeSettings, iter_outcomes\n"
        f"outcomes = list(iter_outcomes({files!r}, AnalyzeSettings(), jobs=2))\n"
        "print(len(outcomes), sum(outcome.error is None for outcome in outcomes))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)  # hang guard
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["40", "40"]
