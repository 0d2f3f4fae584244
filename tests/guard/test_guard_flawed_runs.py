"""The live guard on the demo's scripted flawed policy: its looping cases (C4-LD, C4-DR) run through a proxy
with the guard, as ``tracekit record --guard`` runs it, and the traces they leave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from tracekit.analyze.detectors import detect
from tracekit.analyze.results import analyze_trace
from tracekit.cases import CaseLibrary, load_cases
from tracekit.cli.main import cli
from tracekit.guard import GuardConfig, LiveGuard
from tracekit.report import render_markdown, runs_from_results
from tracekit.results.model import read_results_file
from tracekit.runner.harness import RunSettings
from tracekit.runner.jobs import plan_jobs, select_cases
from tracekit.runner.run import run_jobs
from tracekit.trace import load_trace

ROOT = Path(__file__).resolve().parents[2]
LOOPING = ["C4-LD", "C4-DR"]


@pytest.fixture(scope="module")
def library() -> CaseLibrary:
    return load_cases(ROOT / "cases")


def run_guarded(library: CaseLibrary, out: Path, case: str, config: GuardConfig) -> tuple[LiveGuard, Path]:
    """Run one flawed job through a proxy with its own guard; the guard and the job's trace."""
    (job,) = plan_jobs(select_cases(library, [case]), ["A"], 1)
    guard = LiveGuard(config)
    run_jobs([job], RunSettings(library=library, out_dir=out, model="scripted:flawed", observer=guard), concurrency=1)
    return guard, out / f"{job.name}.jsonl"


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_recorded_live_findings_equal_offline_analysis_of_the_same_traces(library: CaseLibrary, tmp_path: Path) -> None:
    jobs = plan_jobs(select_cases(library, LOOPING), ["A"], 1)
    assert len(jobs) == 5
    flagged = 0
    for job in jobs:
        guard, path = run_guarded(library, tmp_path, job.case.id, GuardConfig())
        (live,) = guard.findings().values()  # one session per job
        _, offline = detect(load_trace(path), guard.options)
        assert [f.to_dict() for f in live] == [f.to_dict() for f in offline], job.name
        # ... which is what `tracekit analyze` reports for the trace (no case library: the guard knows none)
        entry = analyze_trace(load_trace(path))
        assert [finding.model_dump(exclude_defaults=True) for finding in entry.findings] == [
            f.to_dict() for f in live], job.name  # fmt: skip
        # The guard records in the trace: each finding as it formed and grew; the last of each is final.
        last: dict[tuple[str, int], dict[str, Any]] = {}
        for record in records(path):
            if record["kind"] == "guard":
                assert record["event"] == "finding" and record["action"] == "record"
                last[(record["rule"], record["calls"][0])] = record
        for finding in offline:
            written = last[(finding.kind, finding.calls[0])]
            assert (written["calls"], written["message"], written["severity"]) == (
                finding.calls, finding.message, finding.severity)  # fmt: skip
        flagged += len(offline)
    assert flagged >= 2  # the retry loops of C4-LD-01 and C4-DR-02


#: The flawed policy's retry loops: the case and the tool it retries with the same arguments.
RETRY_LOOPS = [("C4-LD-01", "search_flights"), ("C4-DR-02", "beike_lookup_city_id")]


@pytest.mark.parametrize(("case", "tool"), RETRY_LOOPS)
def test_stop_ends_the_session_at_the_configured_call_and_the_trace_says_why(
    library: CaseLibrary, tmp_path: Path, case: str, tool: str
) -> None:
    config = GuardConfig.model_validate({"findings": {"retry_storm": {"action": "stop"}},
                                         "detectors": {"retry_storm": {"failures": 4}}})  # fmt: skip
    _, path = run_guarded(library, tmp_path, case, config)
    lines = records(path)
    calls = [r for r in lines if r["kind"] == "tool_call"]
    (stop,) = [r for r in lines if r["kind"] == "guard"]
    assert (stop["rule"], stop["action"], stop["calls"]) == ("retry_storm", "stop", [0, 1, 2, 3])
    assert len(calls) == 4  # the fourth failure was the last call: the request after it was refused
    refused = [r for r in lines if r["kind"] == "model_call"][-1]
    assert refused["status"] == 403 and refused["index"] == stop["model_call"]
    assert refused["response_headers"].get("x-should-retry") == "false"
    assert "tracekit guard stopped this session (rule retry_storm" in orjson.dumps(refused["response"]).decode()
    assert "failed 4 times" in orjson.dumps(refused["response"]).decode()
    # The analyze JSON and `tracekit show` carry the event.
    (entry,) = analyze_trace(load_trace(path), library=library).guard
    assert (entry.kind, entry.rule, entry.action, entry.calls, entry.figures) == (
        "finding", "retry_storm", "stop", [0, 1, 2, 3], {"calls": 4})  # fmt: skip
    results_file = tmp_path / "results.json"
    html = tmp_path / "html"
    analyzed = CliRunner().invoke(cli, ["analyze", str(path), "--json", str(results_file), "--html", str(html)])
    assert analyzed.exit_code in (0, 1), analyzed.output
    (page,) = (html / "traces").glob("*.html")
    assert "guard · stop · retry_storm · calls 0, 1, 2, 3" in page.read_text(encoding="utf-8")
    (written,) = orjson.loads(results_file.read_bytes())["traces"][0]["guard"]
    assert {key: written[key] for key in ("kind", "rule", "action", "calls", "figures", "model_call")} == {
        "kind": "finding", "rule": "retry_storm", "action": "stop", "calls": [0, 1, 2, 3], "figures": {"calls": 4},
        "model_call": refused["index"]}  # fmt: skip
    assert "failed 4 times" in written["message"]
    results = read_results_file(results_file)
    markdown = render_markdown(runs_from_results(results), results.summary)
    escaped = tool.replace("_", "\\_")  # Markdown
    assert "**Guard (1):**" in markdown and f"stop `retry_storm`: {escaped} failed 4 times" in markdown
    shown = CliRunner().invoke(cli, ["show", str(path)])
    assert shown.exit_code == 0
    assert f"⛨ guard stop retry_storm #0,#1,#2,#3: {tool} failed 4 times" in shown.output


@pytest.mark.parametrize(("case", "tool"), RETRY_LOOPS)
def test_warn_adds_the_note_to_the_next_request_and_records_the_injection(
    library: CaseLibrary, tmp_path: Path, case: str, tool: str
) -> None:
    config = GuardConfig.model_validate({"findings": {"retry_storm": {"action": "warn"}}})
    _, path = run_guarded(library, tmp_path, case, config)
    lines = records(path)
    warned = [r for r in lines if r["kind"] == "guard" and r["action"] == "warn"]
    assert len(warned) == 1  # acted on once; later growth is recorded only
    (note,) = [r for r in lines if r["kind"] == "intercept" and r["mode"] == "guard_note"]
    assert note["model_call"] == warned[0]["model_call"] and f"{tool} failed 3 times" in note["injected"]
    noted = next(r for r in lines if r["kind"] == "model_call" and r["index"] == note["model_call"])
    last_message = noted["request"]["messages"][-1]
    assert last_message["role"] == "user" and last_message["content"][-1] == {"type": "text", "text": note["injected"]}
    assert last_message["content"][0]["type"] == "tool_result"  # the note comes after the tool results
    # The conversation is recorded as the agent sent it: the note is no user message of the trace.
    assert not any(r["kind"] == "user_message" and "tracekit guard" in orjson.dumps(r).decode() for r in lines)
