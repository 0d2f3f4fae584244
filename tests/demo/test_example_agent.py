"""`--agent-cmd` with the demo: the example tool-runner agent (examples/tool_runner_agent.py) through the proxy,
against the reference policy (found through the model-client registry)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from tracekit.analyze.results import analyze_trace
from tracekit.cases import CaseLibrary
from tracekit.cli.main import cli
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
