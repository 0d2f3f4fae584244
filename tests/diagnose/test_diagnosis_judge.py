"""The judge over the evidence (``--diagnose-model``), for its mechanics only: a scripted model (a fake
upstream answering from a script, not a model) names the critical step; answers are validated, kept in the
judge store and read back without a call, and the agreement with the rule-based diagnosis is reported."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.clients import register_model_client
from tracekit.importers import write_traces
from tracekit.importers.common import ImportedTrace
from tracekit.judge.critical_step import TEMPLATE_VERSION, read_answer, render_trace
from tracekit.testing import FakeModelClient, FakeRequest, text_reply

from .tau_format import say, tau_trace, tool, user

RESERVATION = {"reservation_id": "ZFA04Y", "cabin": "economy", "insurance": "no", "created_at": "2024-05-01T10:00:00"}
#: What the scripted judge answers next (the tests set it), and the prompts it was sent.
ANSWER: dict[str, Any] = {}
SEEN: list[str] = []


def _scripted(request: FakeRequest) -> Any:
    SEEN.append(request.body["system"] + "\n" + request.body["messages"][0]["content"])
    return text_reply(ANSWER["text"])


@register_model_client("diagnose-script")
class ScriptedDiagnosisJudge(FakeModelClient):
    """``diagnose-script:<anything>``: answers every request with ``ANSWER["text"]``."""

    def __init__(self, model: str) -> None:
        super().__init__(_scripted)


def _failed_trace(folder: Path) -> None:
    read = tool("get_reservation_details", {"reservation_id": "ZFA04Y"}, RESERVATION)
    cancel = tool("cancel_reservation", {"reservation_id": "ZFA04Y"}, {"status": "cancelled"})
    trace = tau_trace(user("cancel ZFA04Y"), read, say("Cancel ZFA04Y? Please confirm."), user("yes"), cancel,
                      say("Cancelled."), user("###STOP###"), reward=0.0)  # fmt: skip
    write_traces([ImportedTrace("failed", [trace.header.model_copy(update={"trace_id": "failed"}), *trace.records])],
                 folder)  # fmt: skip


def _analyze(tmp_path: Path, *options: str) -> dict[str, Any]:
    out = tmp_path / "results.json"
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "traces"), "--policy", "tau-airline", "--json",
                                      str(out), "--judge-store", str(tmp_path / "store"), *options])  # fmt: skip
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if "--diagnose-model" in options:
        judged = document["summary"]["diagnosis_judge"]
        assert f"diagnosis judge: {judged['judged']} judged ({judged['same_step']} same step" in result.output
    return document


def test_the_judge_names_a_step_kept_and_read_back_without_a_call(tmp_path: Path) -> None:
    _failed_trace(tmp_path / "traces")
    SEEN.clear()
    ANSWER["text"] = json.dumps({"step": 5, "call": 1, "category": "Misinterpretation of Tool Output",
                                 "reason": "cancelled a non-refundable economy booking"})  # fmt: skip
    first = _analyze(tmp_path, "--diagnose-model", "diagnose-script:x")
    judge = first["traces"][0]["diagnosis"]["judge"]
    assert (judge["status"], judge["source"], judge["step"], judge["call"]) == ("judged", "new", 5, 1)
    assert judge["same_step"] and judge["within_one_step"] and judge["same_category"]
    assert judge["template"] == TEMPLATE_VERSION
    assert first["summary"]["diagnosis_judge"] == {"judged": 1, "pending": 0, "errors": 0, "same_step": 1,
                                                   "within_one_step": 1, "same_category": 1}  # fmt: skip
    (prompt,) = SEEN
    assert "[step 5] call #1 cancel_reservation" in prompt and "policy_violation" in prompt
    assert "Intent Not Supported" in prompt  # the taxonomy is in the system prompt; the rules' pick is not shown
    assert (tmp_path / "store" / "diagnosis").is_dir()
    ANSWER["text"] = "not used: the answer is kept"
    again = _analyze(tmp_path, "--diagnose-model", "diagnose-script:x", "--judge-offline", "--html",
                     str(tmp_path / "report"))  # fmt: skip
    pages = {path.name: path.read_text(encoding="utf-8") for path in (tmp_path / "report").rglob("*.html")}
    assert "same step 1, within one step 1, same category 1" in pages["index.html"]
    assert any("judge diagnose-script:x: <a href=" in page and "(same step, same category)" in page
               for page in pages.values())  # fmt: skip
    assert len(SEEN) == 1  # no call
    assert again["traces"][0]["diagnosis"]["judge"] == {**judge, "source": "kept"}
    without = _analyze(tmp_path)
    assert "judge" not in without["traces"][0]["diagnosis"] and "diagnosis_judge" not in without["summary"]


@pytest.mark.parametrize(("answer", "error"), [
    ({"step": 99, "call": None, "category": "Invalid Invocation"}, "step 99 is not a step of the trace"),
    ({"step": 5, "call": 0, "category": "Invalid Invocation"}, "call 0 was not issued at step 5"),
    ({"step": 5, "call": 1, "category": "Bad Luck"}, "category 'Bad Luck' is not in the taxonomy"),
    ("I think step five.", "the answer holds no JSON object"),
])  # fmt: skip
def test_an_answer_naming_what_does_not_exist_is_an_error_never_a_pass(tmp_path: Path, answer: Any, error: str) -> None:
    _failed_trace(tmp_path / "traces")
    ANSWER["text"] = answer if isinstance(answer, str) else json.dumps(answer)
    judged = _analyze(tmp_path, "--diagnose-model", "diagnose-script:x")
    judge = judged["traces"][0]["diagnosis"]["judge"]
    assert judge["status"] == "error" and error in judge["reason"] and "step" not in judge
    assert judged["summary"]["diagnosis_judge"]["errors"] == 1


def test_offline_with_nothing_kept_is_pending_and_calls_nobody(tmp_path: Path) -> None:
    _failed_trace(tmp_path / "traces")
    SEEN.clear()
    judged = _analyze(tmp_path, "--diagnose-model", "diagnose-script:x", "--judge-offline")
    assert judged["traces"][0]["diagnosis"]["judge"]["status"] == "pending" and SEEN == []


def test_the_rendered_trace_numbers_steps_and_calls_as_the_answer_must() -> None:
    trace = tau_trace(user("hi"), tool("get_user_details", {"user_id": "u1"}, "Error: not found"), say("Sorry."))
    text, steps = render_trace(trace)
    assert re.search(r"\[step 1\] call #0 get_user_details\(\{\"user_id\":\"u1\"\}\)", text)
    assert "[step 2] result of call #0 (error): Error: not found" in text
    assert read_answer('Here: {"step": 1, "call": 0, "category": "System Failure", "reason": "r"}', steps) == (
        1, 0, "System Failure", "r")  # fmt: skip


def test_agreement_counts_a_step_one_off_and_another_category(tmp_path: Path) -> None:
    _failed_trace(tmp_path / "traces")
    ANSWER["text"] = json.dumps({"step": 4, "call": None, "category": "Underspecified User Intent", "reason": "r"})
    judged = _analyze(tmp_path, "--diagnose-model", "diagnose-script:x")
    judge = judged["traces"][0]["diagnosis"]["judge"]
    assert (judge["same_step"], judge["within_one_step"], judge["same_category"]) == (False, True, False)
    assert "call" not in judge and judged["summary"]["diagnosis_judge"]["within_one_step"] == 1
