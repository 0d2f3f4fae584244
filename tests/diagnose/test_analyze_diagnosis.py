"""``tracekit analyze --policy``: violations as findings, ``traces[].diagnosis`` for failed traces only, the
same bytes as before where nothing fires, and the real tau-bench airline trajectories (skipped when the
shared data is absent: ../shared from the repository root)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracekit.analyze import AnalyzeSettings, build_results
from tracekit.analyze.entry import analyze_trace
from tracekit.cli.main import cli
from tracekit.importers import import_tau_bench, write_traces
from tracekit.importers.common import ImportedTrace
from tracekit.results.model import TraceResult
from tracekit.trace import load_trace, trace_files

from .tau_format import say, tau_trace, tool, user

RAW = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"
RESERVATION = {"reservation_id": "ZFA04Y", "cabin": "economy", "insurance": "no", "created_at": "2024-05-01T10:00:00"}


def _write(folder: Path, name: str, *messages: Any, reward: float) -> Path:
    trace = tau_trace(*messages, reward=reward)
    records = [trace.header.model_copy(update={"trace_id": name}), *trace.records]
    write_traces([ImportedTrace(name, records)], folder)
    return folder / f"{name}.jsonl"


def _analyze(folder: Path, *options: str) -> dict[str, Any]:
    out = folder / "results.json"
    result = CliRunner().invoke(cli, ["analyze", str(folder), "--json", str(out), *options])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_failed_trace_gets_its_critical_step_and_a_clean_one_is_written_as_before(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    read = tool("get_reservation_details", {"reservation_id": "ZFA04Y"}, RESERVATION)
    cancel = tool("cancel_reservation", {"reservation_id": "ZFA04Y"}, {"status": "cancelled"})
    _write(folder, "bad", user("cancel ZFA04Y"), read, say("Cancel ZFA04Y? Please confirm."), user("yes"), cancel,
           say("Cancelled."), user("###STOP###"), reward=0.0)  # fmt: skip
    _write(folder, "clean", user("What is in ZFA04Y?"), read, say("ZFA04Y is an economy reservation."),
           user("thanks ###STOP###"), reward=1.0)  # fmt: skip
    with_policy = {t["trace_id"]: t for t in _analyze(folder, "--policy", "tau-airline")["traces"]}
    bad = with_policy["bad"]
    assert [f["kind"] for f in bad["findings"]] == ["policy_violation"]
    assert bad["diagnosis"]["step"] == 5 and bad["diagnosis"]["call"] == 1
    assert bad["diagnosis"]["category"] == "Misinterpretation of Tool Output"
    assert bad["diagnosis"]["rule"] == "policy:precondition_state"
    assert bad["diagnosis"]["evidence"][0]["depends_on"] == [2]
    assert bad["diagnosis"]["failed_because"] == ["reward", "violations"]
    without = {t["trace_id"]: t for t in _analyze(folder)["traces"]}
    assert "diagnosis" not in with_policy["clean"] and with_policy["clean"] == without["clean"]
    assert without["bad"]["diagnosis"]["category"] == "Inconclusive"  # reward 0, and nothing without the policy


def test_the_built_entry_writes_what_reading_it_back_writes(tmp_path: Path) -> None:
    failed = tool("cancel_reservation", {"reservation_id": "ZFA04Y"}, "Error: not found")
    path = _write(tmp_path, "t", user("cancel ZFA04Y"), failed, say("It has been successfully cancelled."), reward=0.0)
    entry = analyze_trace(load_trace(path, fast=True))
    assert entry["diagnosis"]["rule"] == "talked_past:success"
    written = entry.to_json_bytes()
    assert TraceResult.model_validate_json(written).to_json_bytes() == written
    assert json.loads(written)["diagnosis"]["evidence"][0] == {
        "rule": "talked_past:success", "step": 3, "message": entry["diagnosis"]["evidence"][0]["message"],
        "depends_on": [2],
    }  # fmt: skip


def test_a_bad_policy_is_bad_usage_naming_file_and_line(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("name: x\nlimits:\n  - {tool: a, limit: many}\n", encoding="utf-8")
    _write(tmp_path, "t", user("hi"), say("hello"), reward=1.0)
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "t.jsonl"), "--policy", str(policy)])
    assert result.exit_code == 2
    assert f"--policy: {policy}:3: limits.0.limit" in result.output and "Traceback" not in result.output


@pytest.mark.skipif(not RAW.exists(), reason="shared tau-bench file absent")
def test_the_real_airline_trajectories_with_the_shipped_policy(tmp_path: Path) -> None:
    write_traces(import_tau_bench(RAW), tmp_path)
    results = build_results(trace_files([tmp_path]), AnalyzeSettings(policy="tau-airline"))
    failed = [t for t in results["traces"] if t["meta"]["reward"] == 0]
    passed = [t for t in results["traces"] if t["meta"]["reward"] == 1]
    assert all(t.get("diagnosis") for t in failed)  # every failed trajectory is diagnosed, if only Inconclusive
    named = [t for t in failed if t["diagnosis"]["step"] is not None]
    flagged = [t for t in passed if t.get("diagnosis") and t["diagnosis"]["step"] is not None
               and not t["diagnosis"]["recovered"]]  # fmt: skip
    # The figures of benchmarks/results/diagnosis_tau_airline.md (issue 29 asks 90% and 10%: see there).
    assert len(named) >= 0.9 * len(failed) and len(flagged) <= 5
    for trace in named:
        steps = {call["index"] for call in trace["tool_calls"]}
        assert trace["diagnosis"]["call"] is None or trace["diagnosis"]["call"] in steps


def test_a_failed_trace_handed_over_is_diagnosed_at_the_transfer(tmp_path: Path) -> None:
    transfer = tool("transfer_to_human_agents", {"summary": "wants a refund"}, "Transfer successful")
    steps = (user("I want a refund for ZFA04Y"), say("Let me transfer you."), transfer)
    settings = AnalyzeSettings(policy="tau-airline")
    failed = analyze_trace(load_trace(_write(tmp_path, "failed", *steps, reward=0.0)), settings)
    assert failed["diagnosis"]["category"] == "Intent Not Supported"
    assert (failed["diagnosis"]["step"], failed["diagnosis"]["call"], failed["diagnosis"]["rule"]) == (
        2,
        0,
        "final:handover",
    )
    passed = analyze_trace(load_trace(_write(tmp_path, "passed", *steps, reward=1.0)), settings)
    assert passed["diagnosis"] is None and passed["findings"] == []
