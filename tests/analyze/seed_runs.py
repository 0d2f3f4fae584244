"""Run a hand-written transcript as a case the way a user does: ``tracekit import anthropic-messages T.json
--case ID`` then ``tracekit analyze``, and read the trace's entry of the results JSON.

The transcripts are small test inputs written in the tests (the case's input as the seeds' "messages 注入"
list, then the agent's turns), not any producer's output. No judge verdicts are kept in the temporary
folders, so a case scored ``auto+judge`` is ``pending`` unless a machine check fails; its machine part is
``verdict.parts.auto``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tracekit.cases.loader import CaseLibrary, load_cases
from tracekit.cli.main import cli

from .factories import Turn, case_history, messages_of

CASES = Path(__file__).resolve().parents[2] / "cases"
_LIBRARY: list[CaseLibrary] = []


def library() -> CaseLibrary:
    """The shipped case library (loaded once)."""
    if not _LIBRARY:
        _LIBRARY.append(load_cases(CASES))
    return _LIBRARY[0]


def transcript(case_id: str, steps: Sequence[Turn | dict[str, Any]], *, with_input: bool = True) -> list[Any]:
    """The messages of a run of ``case_id``: the case's input (unless ``with_input`` is false), then the steps."""
    history = case_history(library().cases[case_id]) if with_input else []
    return messages_of(list(steps), history)


def run_case(tmp_path: Path, case_id: str, messages: list[Any], name: str = "T") -> dict[str, Any]:
    """Import ``messages`` bound to ``case_id`` and analyze them against the case library: the trace entry."""
    source = tmp_path / f"{name}.json"
    source.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / f"{name}-traces"
    runner = CliRunner()
    imported = runner.invoke(
        cli,
        ["import", "anthropic-messages", str(source), "--case", case_id, "--cases", str(CASES), "--out", str(out)],
        catch_exceptions=False,
    )
    assert imported.exit_code == 0, imported.output
    results = tmp_path / f"{name}-results.json"
    analyzed = runner.invoke(
        cli, ["analyze", str(out), "--cases", str(CASES), "--json", str(results)], catch_exceptions=False
    )
    assert analyzed.exit_code == 0, analyzed.output
    [entry] = json.loads(results.read_text(encoding="utf-8"))["traces"]
    assert entry["case_id"] == case_id
    return dict(entry)


def checks_of(entry: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The verdict's checks by name."""
    return {check["check"]: check for check in entry["verdict"]["checks"]}


def machine_result(entry: dict[str, Any]) -> str:
    """The verdict of the machine checks: the result itself, or ``parts.auto`` of a case that uses the judge."""
    verdict = entry["verdict"]
    parts = verdict.get("parts")
    return str(parts["auto"]) if parts and verdict["result"] == "pending" else str(verdict["result"])
