"""`--agent-cmd`: the example tool-runner agent through the proxy, and what the trace keeps of a process."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from tracekit.analyze.results import analyze_trace
from tracekit.cases.loader import CaseLibrary
from tracekit.cli.main import cli
from tracekit.runner.harness import RunSettings
from tracekit.runner.jobs import plan_jobs
from tracekit.runner.run import run_jobs
from tracekit.runner.selection import select_cases
from tracekit.trace import load_trace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'examples' / 'tool_runner_agent.py'))}"


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tool-runner")
    result = CliRunner().invoke(cli, [
        "run", "B2-TS-01", "C4-LD-01", "--model", "scripted:reference", "--groups", "A",
        "--out", str(out), "--agent-cmd", EXAMPLE, "--concurrency", "2", "--cases-dir", str(ROOT / "cases"),
        "--no-progress",
    ])
    assert result.exit_code == 0, result.output
    return out


def test_the_example_agent_runs_each_case_once_through_the_proxy(example_run: Path, library: CaseLibrary) -> None:
    for name in ("B2-TS-01__A__r0", "C4-LD-01__A__r0"):
        records = lines(example_run / f"{name}.jsonl")
        header, closing = records[0], records[-1]
        assert header["session"] == name and header["source"] == "run:scripted:reference:agent-cmd"
        assert closing["kind"] == "agent_run" and closing["exit_status"] == 0 and not closing["timed_out"]
        assert "tool_runner_agent.py" in closing["command"]
        # the tool runner continues its thread: requests after the first carry only the new messages
        calls = [r for r in records if r["kind"] == "model_call"]
        assert calls and all(call["stitched"] == "header" for call in calls)
        verdict = analyze_trace(load_trace(example_run / f"{name}.jsonl"), library=library)["verdict"]
        assert not [check for check in verdict["checks"] if check["result"] == "fail"], name


def test_intercepted_failures_reach_the_model_and_the_trace_shows_them(example_run: Path) -> None:
    records = lines(example_run / "C4-LD-01__A__r0.jsonl")
    intercepts = [r for r in records if r["kind"] == "intercept"]
    results = [r for r in records if r["kind"] == "tool_result"]
    assert len(intercepts) == len(results) == 3
    for intercept, result in zip(intercepts, results, strict=True):
        # the agent's tool answered from the catalog mock; the model saw the case's injected error
        assert "flights" in str(intercept["original"]) and "Invalid date parameter format" in intercept["injected"]
        assert result["is_error"] and result["injected"] and "Invalid date parameter format" in str(result["content"])


def run_command(library: CaseLibrary, out: Path, command: str, timeout: float = 30) -> dict[str, Any]:
    jobs = plan_jobs(select_cases(library, ["B2-TS-02"]), ["A"], 1)
    settings = RunSettings(library=library, out_dir=out, model="scripted:reference", agent_cmd=command,
                           timeout=timeout)
    report = run_jobs(jobs, settings)
    assert len(report.results) == 1
    return lines(out / "B2-TS-02__A__r0.jsonl")[-1]


def test_exit_status_and_stderr_are_kept_and_secrets_redacted(
    library: CaseLibrary, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACEKIT_REDACT", "hunter2-secret-value")
    from tracekit import redact

    monkeypatch.setattr(redact, "_default", None)
    script = ("import os, sys; print('case file', os.environ['TRACEKIT_CASE_FILE'].endswith('case.json')); "
              "sys.stderr.write('boom hunter2-secret-value ' + os.environ['TRACEKIT_SESSION']); sys.exit(3)")
    closing = run_command(library, tmp_path, f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}")
    assert closing["exit_status"] == 3 and not closing["timed_out"]
    assert closing["stderr"] == "boom [REDACTED] B2-TS-02__A__r0"
    assert closing["stdout"].strip() == "case file True"


def test_a_hanging_agent_is_killed_at_the_timeout(library: CaseLibrary, tmp_path: Path) -> None:
    script = "import time; time.sleep(60)"
    closing = run_command(library, tmp_path, f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}", timeout=1)
    assert closing["timed_out"] and closing.get("exit_status") is None
    assert closing["duration_ms"] < 20_000
    header = lines(tmp_path / "B2-TS-02__A__r0.jsonl")[0]
    assert header["case_id"] == "B2-TS-02"  # no model request was made: the trace is header + agent_run


def test_a_command_that_cannot_start_is_recorded(library: CaseLibrary, tmp_path: Path) -> None:
    closing = run_command(library, tmp_path, "/nonexistent/agent --flag")
    assert closing.get("exit_status") is None and "cannot start the command" in closing["stderr"]
