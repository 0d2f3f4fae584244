"""A --cases folder that holds no case, and a --case file that is not a case, are refused at once with one
line (exit status 2), not accepted with a warning per trace or an empty set of intercepts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.cli import cli
from tracekit.trace import Header, UserMessage, write_trace


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    for number in range(3):
        write_trace(tmp_path / "traces" / f"t{number}.jsonl", [
            Header(trace_id=f"t{number}", source="test", case_id="B2-PC-02"),
            UserMessage(message_index=0, content="你好"),
        ])  # fmt: skip
    return tmp_path / "traces"


@pytest.fixture
def no_cases(tmp_path: Path) -> Path:
    folder = tmp_path / "library"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "README.md").write_text("no case here")
    return folder


def test_analyze_with_a_cases_folder_holding_no_case_says_so_once(traces: Path, no_cases: Path) -> None:
    result = CliRunner().invoke(cli, ["analyze", str(traces), "--cases", str(no_cases)])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"Error: --cases {no_cases}: this folder holds no cases (a case is a .yaml file such as b2/<ID>.yaml); "
        "give the case library's folder, e.g. cases"
    ]


@pytest.mark.parametrize("command", [["cases", "list"], ["cases", "validate"]])
def test_the_cases_commands_say_the_folder_holds_no_cases(no_cases: Path, command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, str(no_cases)])
    assert result.exit_code == 2
    assert "this folder holds no cases" in result.output


def test_diff_and_report_refuse_a_cases_folder_holding_no_case(traces: Path, no_cases: Path, tmp_path: Path) -> None:
    diffed = CliRunner().invoke(cli, ["diff", str(traces), str(traces), "--cases", str(no_cases)])
    assert diffed.exit_code == 2 and "this folder holds no cases" in diffed.output, diffed.output
    results = tmp_path / "results.json"
    assert CliRunner().invoke(cli, ["analyze", str(traces), "--json", str(results)]).exit_code == 0
    report = ["report", str(results), "--html", str(tmp_path / "r"), "--cases", str(no_cases)]
    reported = CliRunner().invoke(cli, report)
    assert reported.exit_code == 2 and "this folder holds no cases" in reported.output, reported.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("content", "found"), [
    ('{"model": "claude", "messages": []}', "found an object with keys messages, model"),
    ("42", "found a number"),
])  # fmt: skip
@pytest.mark.parametrize("command", ["record", "replay"])
def test_a_case_file_that_is_not_a_case_is_refused(tmp_path: Path, command: str, content: str, found: str) -> None:
    case = tmp_path / "request.json"
    case.write_text(content)
    write_trace(tmp_path / "rec" / "t.jsonl", [Header(trace_id="t", source="test")])
    where = ["record", "--upstream", "http://127.0.0.1:9", "--out", str(tmp_path / "out")] if command == "record" else [
        "replay", str(tmp_path / "rec")]
    # A subprocess: a proxy that started anyway would serve until stopped, so the bound is the test's failure.
    result = subprocess.run([sys.executable, "-m", "tracekit", *where, "--port", "0", "--case", str(case)],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert f"{case}: not a case or an intercept file: {found}" in result.stderr
    assert not (tmp_path / "out").exists()
