"""``tracekit import``: the three subcommands, their report, and exit 2 on bad input."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"


def test_anthropic_messages(tmp_path: Path) -> None:
    source = tmp_path / "seed.json"
    source.write_text(json.dumps([{"role": "user", "content": "你好"}, {"role": "assistant", "content": "您好！"}],
                                 ensure_ascii=False), encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", "anthropic-messages", str(source), "--case", "Q1-TF-01",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert f"wrote 1 trace to {tmp_path / 'out'}" in result.output
    assert f"next: tracekit analyze {tmp_path / 'out'}" in result.output
    header = json.loads((tmp_path / "out" / "seed.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert header["case_id"] == "Q1-TF-01"


def test_openai_messages_bad_input_exits_2(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    messages = [{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}]
    source.write_text(json.dumps(messages), encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", "openai-messages", str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert f"{source}: messages[1]: tool message without a string \"tool_call_id\"" in result.output
    assert not (tmp_path / "out").exists(), "nothing is written when an input is bad"


def test_missing_file_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["import", "tau-bench", str(tmp_path / "nope.json"), "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "nope.json: cannot read" in result.output


@pytest.mark.skipif(not REAL.exists(), reason="shared tau-bench file absent")
def test_tau_bench_then_analyze(tmp_path: Path) -> None:
    out = tmp_path / "tau"
    result = CliRunner().invoke(cli, ["import", "tau-bench", str(REAL), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 200 traces" in result.output and f"next: tracekit analyze {out}" in result.output
    if importlib.util.find_spec("tracekit.cli.analyze") is None:
        pytest.skip("analyze command not available")
    raw = json.loads(REAL.read_text(encoding="utf-8"))
    calls = sum(len(m.get("tool_calls") or []) for e in raw for m in e["traj"])
    errors = sum(1 for e in raw for m in e["traj"] if m["role"] == "tool" and str(m["content"]).startswith("Error:"))
    report = tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["analyze", str(out), "--json", str(report)])
    assert result.exit_code == 0, result.output
    traces = json.loads(report.read_text(encoding="utf-8"))["traces"]
    assert len(traces) == 200
    assert sum(t["stats"]["tool_calls"] for t in traces) == calls
    assert sum(t["stats"]["tool_errors"] for t in traces) == errors
    assert {t["meta"]["trial"] for t in traces} == {0, 1, 2, 3}
