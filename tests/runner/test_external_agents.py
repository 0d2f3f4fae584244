"""`--agent-cmd`: what the trace keeps of an agent process (exit status, output, timeout), run against the
test-local stand-in ``canned:<text>`` (conftest). The example agent's run is in tests/demo."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tracekit.cases.loader import CaseLibrary
from tracekit.runner.external import AgentEnvironment
from tracekit.runner.harness import RunSettings
from tracekit.runner.jobs import plan_jobs, select_cases
from tracekit.runner.run import run_jobs

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'examples' / 'tool_runner_agent.py'))}"


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def run_command(library: CaseLibrary, out: Path, command: str, timeout: float = 30) -> dict[str, Any]:
    jobs = plan_jobs(select_cases(library, ["B2-TS-02"]), ["A"], 1)
    settings = RunSettings(library=library, out_dir=out, model="canned:好的", agent_cmd=command, timeout=timeout)
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


def test_the_model_client_s_own_key_fills_in_for_missing_keys_only() -> None:
    environment = AgentEnvironment("http://127.0.0.1:1", "s", "case.json", "m", "anthropic", api_key="stand-in-key")
    variables = environment.variables({"OPENAI_API_KEY": "sk-mine"})
    assert (variables["ANTHROPIC_API_KEY"], variables["OPENAI_API_KEY"]) == ("stand-in-key", "sk-mine")
    assert "ANTHROPIC_API_KEY" not in AgentEnvironment("http://127.0.0.1:1", "s", "c", "m", "anthropic").variables({})
