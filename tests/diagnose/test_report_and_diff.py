"""The diagnosis in the HTML report (the headline linked to its step, the index column) and in ``tracekit
diff`` (JSON pairs and Markdown say when the critical step moved or changed category)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.importers import write_traces
from tracekit.importers.common import ImportedTrace

from .tau_format import say, tau_trace, tool, user

RESERVATION = {"reservation_id": "ZFA04Y", "cabin": "economy", "insurance": "no", "created_at": "2024-05-01T10:00:00"}


def _folder(folder: Path, *messages: Any) -> Path:
    trace = tau_trace(*messages, reward=0.0)
    write_traces([ImportedTrace("t", [trace.header.model_copy(update={"trace_id": "t"}), *trace.records])], folder)
    return folder


def _cancel_without_reading(folder: Path) -> Path:
    return _folder(folder, user("cancel ZFA04Y"), say("Cancel ZFA04Y? Please confirm."), user("yes"),
                   tool("cancel_reservation", {"reservation_id": "ZFA04Y"}, {"ok": True}), say("Done."),
                   user("###STOP###"))  # fmt: skip


def _cancel_after_reading(folder: Path) -> Path:
    return _folder(folder, user("cancel ZFA04Y"), tool("get_reservation_details", {"reservation_id": "ZFA04Y"},
                   RESERVATION), say("Cancel ZFA04Y? Please confirm."), user("yes"),
                   tool("cancel_reservation", {"reservation_id": "ZFA04Y"}, {"ok": True}), say("Done."),
                   user("###STOP###"))  # fmt: skip


def _analyze(folder: Path, *options: str) -> Path:
    out = folder / "results.json"
    result = CliRunner().invoke(cli, ["analyze", str(folder), "--policy", "tau-airline", "--json", str(out), *options])
    assert result.exit_code == 0, result.output
    return out


def test_the_trace_page_opens_with_where_it_went_wrong_linked_to_the_step(tmp_path: Path) -> None:
    folder = _cancel_without_reading(tmp_path / "t")
    _analyze(folder, "--html", str(tmp_path / "html"))
    page = (tmp_path / "html" / "traces" / "t.html").read_text(encoding="utf-8")
    headline = page.split('id="diagnosis"', 1)[1].split("</p>", 1)[0]
    assert '<a href="#call-0">went wrong at step 3</a>: Instruction/Plan Adherence Failure: call #0' in headline
    assert 'id="call-0"' in page and 'id="step-2"' in page
    index = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert ">went wrong at</th>" in index and "step 3: Instruction/Plan Adherence Failure" in index


def test_diff_says_when_the_critical_step_moved_and_changed_category(tmp_path: Path) -> None:
    base = _analyze(_cancel_without_reading(tmp_path / "base"))
    new = _analyze(_cancel_after_reading(tmp_path / "new"))
    out, markdown = tmp_path / "diff.json", tmp_path / "diff.md"
    result = CliRunner().invoke(cli, ["diff", str(base), str(new), "--json", str(out), "--markdown", str(markdown)])
    assert result.exit_code == 0, result.output
    (pair,) = json.loads(out.read_text(encoding="utf-8"))["pairs"]
    assert pair["critical_step"] == {
        "change": "moved_and_category",
        "step": {"base": 3, "new": 5},
        "category": {"base": "Instruction/Plan Adherence Failure", "new": "Misinterpretation of Tool Output"},
        "rule": {"base": "policy:precondition", "new": "policy:precondition_state"},
    }
    text = markdown.read_text(encoding="utf-8")
    assert "**Critical step changed (1):**" in text
    assert ("critical step moved and category: step 3 (Instruction/Plan Adherence Failure) → step 5 "
            "(Misinterpretation of Tool Output)") in text  # fmt: skip
    same = CliRunner().invoke(cli, ["diff", str(base), str(base), "--json", str(out)])
    assert same.exit_code == 0 and "critical_step" not in out.read_text(encoding="utf-8")
