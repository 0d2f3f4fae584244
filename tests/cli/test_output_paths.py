"""Output paths that cannot be written are refused before any work, with exit status 2 and a line that
says what to do; a missing folder is created. No traceback, no exit status 1 (kept for failed checks)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tracekit.cli import cli
from tracekit.trace import Header, ToolCall, ToolResult, UserMessage, write_trace


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    folder = tmp_path / "traces"
    write_trace(folder / "t.jsonl", [
        Header(trace_id="t", source="test"),
        UserMessage(message_index=0, content="北京明天天气"),
        ToolCall(index=0, name="get_weather", input={"city": "北京"}, message_index=1),
        ToolResult(call_index=0, content="晴", message_index=2),
    ])  # fmt: skip
    return folder


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _refused(result: Result, *says: str) -> None:
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), "a clear error, not an unhandled exception"
    assert "traces," not in result.output, "refused before the analysis ran"
    for text in says:
        assert text in result.output


def test_json_under_a_file_is_refused_before_the_analysis(traces: Path, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    _refused(_run("analyze", str(traces), "--json", str(tmp_path / "afile" / "results.json")),
             "--json", "afile is a file", "give a path in a folder")  # fmt: skip


def test_json_naming_a_folder_is_refused(traces: Path, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    _refused(_run("analyze", str(traces), "--json", str(tmp_path / "out")), "is a folder; give a file name")


def test_json_in_a_missing_folder_creates_it(traces: Path, tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "results.json"
    result = _run("analyze", str(traces), "--json", str(target))
    assert result.exit_code == 0, result.output
    assert target.is_file()


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[Path]:
    """A folder this process cannot create files in: permission bits for a user; for root (whom they do not
    stop) the kernel's /proc, where no file can be created."""
    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir(mode=0o500)
        yield folder
        folder.chmod(0o700)
    elif Path("/proc/self").is_dir():
        yield Path("/proc")
    else:
        pytest.skip("running as root with no /proc: no folder here refuses root")


def test_json_in_a_folder_that_cannot_be_written_is_refused(traces: Path, unwritable: Path) -> None:
    _refused(_run("analyze", str(traces), "--json", str(unwritable / "results.json")),
             f"cannot write in {unwritable}", "give a folder you can write")  # fmt: skip


@pytest.mark.parametrize("option", ["--html", "--parquet"])
def test_a_report_folder_that_is_a_file_is_refused_before_the_analysis(
    traces: Path, tmp_path: Path, option: str
) -> None:
    (tmp_path / "report").write_text("x")
    _refused(_run("analyze", str(traces), option, str(tmp_path / "report")), "is a file, not a folder")


@pytest.mark.parametrize("option", ["--markdown", "--junit"])
def test_a_report_file_under_a_file_is_refused(traces: Path, tmp_path: Path, option: str) -> None:
    (tmp_path / "afile").write_text("x")
    _refused(_run("analyze", str(traces), option, str(tmp_path / "afile" / "r.md")), "afile is a file")


def test_a_file_system_error_no_command_foresaw_is_one_line_and_exit_2(traces: Path, tmp_path: Path) -> None:
    html = tmp_path / "html"
    html.mkdir()
    (html / "traces").write_text("in the way of the trace pages' folder")
    result = _run("analyze", str(traces), "--html", str(html))
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert "traces" in result.output.splitlines()[-1] and "check the path" in result.output


def test_export_otel_refuses_an_out_under_a_file(traces: Path, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    result = _run("export", "otel", str(traces), "--out", str(tmp_path / "afile" / "o.json"))
    assert result.exit_code == 2 and "afile is a file" in result.output, result.output


# -- one rule for input paths that hold nothing -----------------------------------------------------


@pytest.mark.parametrize("command", ["analyze", "show", "export otel"])
def test_a_folder_without_traces_exits_2_with_the_same_message(tmp_path: Path, command: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = ["--out", str(tmp_path / "o.json")] if command.startswith("export") else []
    result = _run(*command.split(), str(empty), *out)
    assert result.exit_code == 2, result.output
    assert f"no trace files found in {empty}" in result.output and "(a trace file ends in .jsonl)" in result.output
    assert not (tmp_path / "o.json").exists()


def test_diff_of_an_empty_folder_exits_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = _run("diff", str(tmp_path / "empty"), str(tmp_path / "empty"))
    assert result.exit_code == 2 and "no trace files found in" in result.output, result.output


@pytest.mark.parametrize("importer", ["otel", "openinference", "inspect", "openai-agents"])
def test_an_import_from_a_folder_holding_nothing_exits_2_and_writes_nothing(tmp_path: Path, importer: str) -> None:
    (tmp_path / "empty").mkdir()
    result = _run("import", importer, str(tmp_path / "empty"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert "no files found in this folder" in result.output and "nothing imported" in result.output
    assert not (tmp_path / "out").exists()


def test_report_diff_and_import_refuse_an_output_in_the_way(traces: Path, tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    assert _run("analyze", str(traces), "--json", str(results)).exit_code == 0
    (tmp_path / "afile").write_text("x")
    under = str(tmp_path / "afile" / "x.md")
    for args in (["report", str(results), "--html", str(tmp_path / "afile")],
                 ["report", str(results), "--markdown", under],
                 ["diff", str(results), str(results), "--json", str(tmp_path)],
                 ["diff", str(results), str(results), "--html", str(tmp_path / "afile")],
                 ["import", "otel", str(traces), "--out", str(tmp_path / "afile")]):  # fmt: skip
        result = _run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert isinstance(result.exception, SystemExit) and "Error: --" in result.output, (args, result.output)
    assert (tmp_path / "afile").read_text() == "x"
