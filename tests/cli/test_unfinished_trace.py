"""A trace the writer did not finish (its last line torn) never passes silently: the torn line is reported
and skipped (never fatal), and a verdict that would have been pass is pending, with a check saying why."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tracekit.cli import cli

ROOT = Path(__file__).resolve().parents[2]
LOOPING_RUN = ROOT / "recordings" / "reference" / "C4-LD-01__A__r0.jsonl"


def _analyze(trace: Path, tmp_path: Path) -> tuple[dict, str]:
    results = tmp_path / "results.json"
    outcome = CliRunner().invoke(cli, ["analyze", str(trace), "--cases", str(ROOT / "cases"), "--json", str(results)])
    assert outcome.exit_code == 0, outcome.output
    return json.loads(results.read_text(encoding="utf-8"))["traces"][0], outcome.output


def test_a_torn_trace_of_a_looping_run_is_not_judged_pass(tmp_path: Path) -> None:
    whole, _ = _analyze(LOOPING_RUN, tmp_path)
    assert whole["verdict"]["result"] == "pass", "the run as written passes"
    data = LOOPING_RUN.read_bytes()
    torn = tmp_path / "torn" / LOOPING_RUN.name
    torn.parent.mkdir()
    torn.write_bytes(data[: len(data) - 40])  # the writer stopped 40 bytes before the end of its last record
    lines = data.count(b"\n")
    entry, output = _analyze(torn, tmp_path)
    assert f"{torn}:{lines}: torn last line" in output, "reported, and the rest still analyzed"
    assert entry["problems"] == [f"{torn}:{lines}: torn last line (the writer stopped mid-record)"]
    assert entry["verdict"]["result"] == "pending"
    first = entry["verdict"]["checks"][0]
    assert (first["check"], first["result"]) == ("trace_complete", "pending")
    assert f"line {lines} is torn" in first["evidence"] and "record the run again" in first["evidence"]
    assert entry["stats"]["tool_calls"] == whole["stats"]["tool_calls"], "the whole lines are all read"
