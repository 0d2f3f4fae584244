"""Whole runs with the demo's scripted policies, found through the model-client registry: verdicts from the
offline analysis, how the traces say they were made, A/B pairs, and the command line.

The subset covers each dimension and each kind of failure a flawed plan was written to show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from tracekit_demo.clients import MADE_BY, PolicyClient
from tracekit_demo.policies import plan_for

from tracekit.analyze.results import analyze_trace
from tracekit.analyze.run_summary import run_summary, trial_verdicts
from tracekit.cases import CaseLibrary
from tracekit.cli.main import cli
from tracekit.runner.harness import RunSettings
from tracekit.runner.jobs import plan_jobs, select_cases
from tracekit.runner.run import run_jobs
from tracekit.trace import load_trace

ROOT = Path(__file__).resolve().parents[2]

#: case -> a check the flawed plan must fail (its failure as the case's own checks see it)
FLAWED_FAILS = {
    "B2-TS-01": "forbidden_tools",            # wrong tool: web_search
    "B2-PC-02": "calls[0]:search_flights",    # 下周五 taken as this Friday
    "B2-PC-03": "data_flow:beike_lookup_city_id.city_id->beike_search_resale_housing.city_id",  # invented id
    "B2-FR-02": "recovery",                   # relays the error and stops
    "C4-LD-01": "tool_counts:search_flights",  # retry loop
    "C4-PA-01": "call_count",                 # gives up at the first failure
    "Q1-KB-02": "answer",                     # fabricated logistics
    "Q3-ST-02": "call_count",                 # redundant calls
    "TT-07": "no_tool_call",                  # over-tooling
}


def settings_for(library: CaseLibrary, out: Path, policy: str) -> RunSettings:
    settings = RunSettings(library=library, out_dir=out, model=f"scripted:{policy}")
    assert isinstance(settings.client, PolicyClient) and settings.client.policy == policy
    return settings


def verdicts(out: Path, library: CaseLibrary) -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted(out.glob("*.jsonl")):
        entry = analyze_trace(load_trace(path), library=library)
        found[path.stem] = entry["verdict"]
    return found


@pytest.fixture(scope="module")
def reference_run(library: CaseLibrary, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reference")
    jobs = plan_jobs(select_cases(library, list(FLAWED_FAILS)), ["A", "B"], 1)
    report = run_jobs(jobs, settings_for(library, out, "reference"), concurrency=6)
    assert not report.errors, [(r.job.name, r.error) for r in report.errors]
    return out


def test_reference_policy_passes_every_automatic_check(reference_run: Path, library: CaseLibrary) -> None:
    found = verdicts(reference_run, library)
    assert len(found) == 14  # B2 and Q3 cases in groups A and B, C4 and Q1 in A only, TT-07 without groups
    for name, verdict in found.items():
        assert verdict["result"] in ("pass", "acceptable"), (name, verdict)
        failing = [check for check in verdict["checks"] if check["result"] == "fail"]
        assert not failing, (name, failing)


def test_flawed_policy_shows_the_failure_it_was_written_for(library: CaseLibrary, tmp_path: Path) -> None:
    jobs = plan_jobs(select_cases(library, list(FLAWED_FAILS)), ["A"], 1)
    report = run_jobs(jobs, settings_for(library, tmp_path, "flawed"), concurrency=6)
    assert not report.errors
    found = verdicts(tmp_path, library)
    for name, verdict in found.items():
        case_id = name.split("__")[0]
        failed = {check["check"] for check in verdict["checks"] if check["result"] == "fail"}
        assert verdict["result"] == "fail" and FLAWED_FAILS[case_id] in failed, (name, failed)
        assert plan_for("flawed", library.get(case_id), library.catalog).failure


def test_traces_are_bound_to_case_group_and_repeat_and_say_how_they_were_made(reference_run: Path) -> None:
    path = reference_run / "B2-TS-01__B__r0.jsonl"
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    header, closing = lines[0], lines[-1]
    assert (header["case_id"], header["group"], header["repeat"]) == ("B2-TS-01", "B", 0)
    assert header["source"] == "run:scripted:reference"
    assert header["meta"]["run"]["skills"] == ["flight_booking_skill"]
    assert header["trace_id"] == "B2-TS-01__B__r0@scripted:reference"
    policy = header["meta"]["policy"]
    assert (policy["name"], policy["failure"], policy["made_by"]) == ("reference", None, MADE_BY)
    assert policy["note"] == "derived from expect: search_flights, then answers"
    assert closing["kind"] == "agent_run" and closing["stop"] == "end_turn"
    assert '<skill name=\\"flight_booking_skill\\">' in path.read_text(encoding="utf-8")


def test_group_a_and_b_are_paired_in_the_summary(reference_run: Path, library: CaseLibrary) -> None:
    jobs = plan_jobs(select_cases(library, list(FLAWED_FAILS)), ["A", "B"], 1)
    summary = run_summary(trial_verdicts(jobs, reference_run, library), repeat=1)
    pairs = {pair["case_id"]: pair for pair in summary["groups"]}
    assert "TT-07" not in pairs and set(pairs) == set(FLAWED_FAILS) - {"TT-07", "Q1-KB-02", "C4-LD-01", "C4-PA-01"}
    assert all(pair["better"] == "tie" for pair in pairs.values())
    assert summary["reliability"]["mean_pass^k"]["1"] == 1.0


def run(args: list[str]) -> Any:
    return CliRunner().invoke(cli, ["run", *args, "--cases-dir", str(ROOT / "cases"), "--no-progress"], env={
        "ANTHROPIC_API_KEY": None})


def test_the_demo_needs_no_key_and_prints_verdicts_pass_k_and_pairs(tmp_path: Path) -> None:
    result = run(["B2-TS-01", "B2-TS-02", "--model", "scripted:flawed", "--repeat", "2", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "8 traces: 8 fail" in result.output
    assert "pass^1 0.00, pass^2 0.00" in result.output
    assert "Group A vs B on 2 cases" in result.output
    summary = orjson.loads((tmp_path / "run-summary.json").read_bytes())
    assert summary["summary"]["reliability"]["ks"] == [1, 2]
    assert {trial["trace"] for trial in summary["trials"]} == {path.name for path in tmp_path.glob("*.jsonl")}


def test_judged_cases_are_pending_with_a_note_unless_a_judge_model_is_given(tmp_path: Path) -> None:
    # B2-FR-01 is scored "auto + LLM-judge": without kept verdicts the summary says why they are pending.
    pending = run(["B2-FR-01", "--model", "scripted:reference", "--out", str(tmp_path / "plain")])
    assert pending.exit_code == 0, pending.output
    assert "2 traces: 2 pending" in pending.output and "note: no kept judge verdicts" in pending.output
    judged = run(["B2-FR-01", "--model", "scripted:reference", "--judge-model", "scripted:judge",
                  "--out", str(tmp_path / "judged")])  # fmt: skip
    assert judged.exit_code == 0, judged.output
    assert "2 traces: 2 pass" in judged.output and f"kept in {tmp_path / 'judged' / 'judge'}" in judged.output


def test_unknown_scripted_models_are_bad_usage(tmp_path: Path) -> None:
    unknown = run(["B2-TS-01", "--model", "scripted:perfect", "--out", str(tmp_path)])
    assert unknown.exit_code == 2 and "unknown scripted policy 'perfect'" in unknown.output
    judge = run(["B2-TS-01", "--model", "scripted:judge", "--out", str(tmp_path)])
    assert judge.exit_code == 2 and "'scripted:judge' cannot run as an agent" in judge.output
    assert not list(tmp_path.glob("*.jsonl"))


def test_a_folder_of_another_policy_is_not_resumed(tmp_path: Path) -> None:
    first = run(["B2-TS-01", "--groups", "A", "--model", "scripted:reference", "--out", str(tmp_path)])
    assert first.exit_code == 0
    other = run(["B2-TS-01", "--groups", "A", "--model", "scripted:flawed", "--out", str(tmp_path)])
    assert other.exit_code == 2 and "made by another run" in other.output
    again = run(["B2-TS-01", "--groups", "A", "--model", "scripted:reference", "--out", str(tmp_path)])
    assert again.exit_code == 0 and "0 jobs run, 1 already complete" in again.output
