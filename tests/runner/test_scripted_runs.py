"""Whole runs with the scripted policies: verdicts from the offline analysis, A/B pairs, resuming, Ctrl-C.

The subset covers each dimension and each kind of failure a flawed plan was written to show.
"""

from __future__ import annotations

import _thread
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from tracekit.analyze.results import analyze_trace
from tracekit.cases.loader import CaseLibrary
from tracekit.runner.harness import JobResult, RunSettings, run_job
from tracekit.runner.jobs import Job, completed_jobs, plan_jobs
from tracekit.runner.policies import plan_for
from tracekit.runner.run import run_jobs
from tracekit.runner.selection import select_cases
from tracekit.runner.summary import run_summary, trial_verdicts
from tracekit.trace import load_trace

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
    return RunSettings(library=library, out_dir=out, model=f"scripted:{policy}")


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
    assert closing["kind"] == "agent_run" and closing["stop"] == "end_turn"
    assert '<skill name=\\"flight_booking_skill\\">' in path.read_text(encoding="utf-8")


def test_group_a_and_b_are_paired_in_the_summary(reference_run: Path, library: CaseLibrary) -> None:
    jobs = plan_jobs(select_cases(library, list(FLAWED_FAILS)), ["A", "B"], 1)
    summary = run_summary(trial_verdicts(jobs, reference_run, library), repeat=1)
    pairs = {pair["case_id"]: pair for pair in summary["groups"]}
    assert "TT-07" not in pairs and set(pairs) == set(FLAWED_FAILS) - {"TT-07", "Q1-KB-02", "C4-LD-01", "C4-PA-01"}
    assert all(pair["better"] == "tie" for pair in pairs.values())
    assert summary["reliability"]["mean_pass^k"]["1"] == 1.0


def test_repeats_give_pass_hat_k(library: CaseLibrary, tmp_path: Path) -> None:
    jobs = plan_jobs(select_cases(library, ["C4-LD-01"]), None, 3)
    run_jobs(jobs, settings_for(library, tmp_path, "flawed"), concurrency=3)
    summary = run_summary(trial_verdicts(jobs, tmp_path, library), repeat=3)
    (case,) = summary["reliability"]["cases"]
    assert (case["trials"], case["passes"], case["pass^k"]["3"], case["flaky"]) == (3, 0, 0.0, False)


def test_a_rerun_skips_complete_jobs_and_redoes_missing_ones(library: CaseLibrary, tmp_path: Path) -> None:
    jobs = plan_jobs(select_cases(library, ["B2-TS-01", "B2-TS-02"]), ["A"], 1)
    settings = settings_for(library, tmp_path, "reference")
    first = run_jobs(jobs, settings)
    assert len(first.results) == 2 and completed_jobs(tmp_path) == {"B2-TS-01__A__r0", "B2-TS-02__A__r0"}
    (tmp_path / "B2-TS-02__A__r0.jsonl").unlink()
    (tmp_path / ".B2-TS-01__A__r1.jsonl.part").write_text('{"kind":"header"', encoding="utf-8")  # torn leftover
    second = run_jobs(jobs, settings)
    assert [job.name for job in second.skipped] == ["B2-TS-01__A__r0"]
    assert [result.job.name for result in second.results] == ["B2-TS-02__A__r0"]
    assert not list(tmp_path.glob(".*.part"))


def test_a_trace_without_its_closing_record_is_not_complete(library: CaseLibrary, tmp_path: Path) -> None:
    jobs = plan_jobs(select_cases(library, ["B2-TS-01"]), ["A"], 1)
    run_jobs(jobs, settings_for(library, tmp_path, "reference"))
    path = tmp_path / "B2-TS-01__A__r0.jsonl"
    path.write_bytes(b"\n".join(path.read_bytes().splitlines()[:-1]) + b"\n")
    assert completed_jobs(tmp_path) == set()


def test_ctrl_c_leaves_complete_traces_only(library: CaseLibrary, tmp_path: Path) -> None:
    started = threading.Event()

    def slow_job(job: Job, settings: RunSettings) -> JobResult:
        if job.case.id == "B2-TS-02":
            started.set()
            time.sleep(30)  # interrupted long before this returns; the thread is a daemon
        return run_job(job, settings)

    def interrupt() -> None:
        started.wait(20)
        time.sleep(0.5)
        _thread.interrupt_main()

    jobs = plan_jobs(select_cases(library, ["B2-TS-01", "B2-TS-02"]), ["A"], 1)
    threading.Thread(target=interrupt, daemon=True).start()
    report = run_jobs(jobs, settings_for(library, tmp_path, "reference"), concurrency=2, job_runner=slow_job)
    assert report.interrupted
    assert completed_jobs(tmp_path) == {"B2-TS-01__A__r0"}
    assert sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*")) == ["B2-TS-01__A__r0.jsonl"]
