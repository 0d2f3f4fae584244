"""Whole runs through the model-client registry, with the test-local stand-in ``canned:<text>`` (conftest):
what the traces say, resuming, Ctrl-C, pass^k, and models a client declines."""

from __future__ import annotations

import _thread
import threading
import time
from pathlib import Path

import orjson
import pytest

from tracekit.analyze.run_summary import run_summary, trial_verdicts
from tracekit.cases.loader import CaseLibrary
from tracekit.clients import ModelUse
from tracekit.runner.harness import JobResult, RunSettings, RunSetupError, run_job
from tracekit.runner.jobs import Job, completed_jobs, plan_jobs, select_cases
from tracekit.runner.run import run_jobs
from tracekit.testing import FAKE_API_KEY

from .conftest import CannedModel

ANSWER = "好的，已经处理完了。"
MODEL = f"canned:{ANSWER}"


def settings_for(library: CaseLibrary, out: Path, model: str = MODEL) -> RunSettings:
    return RunSettings(library=library, out_dir=out, model=model)


def test_a_registered_prefix_makes_the_run_go_to_its_client(library: CaseLibrary, tmp_path: Path) -> None:
    settings = settings_for(library, tmp_path)
    assert isinstance(settings.client, CannedModel) and settings.key() == FAKE_API_KEY  # no key needed
    report = run_jobs(plan_jobs(select_cases(library, ["B2-TS-01"]), ["B"], 1), settings)
    assert not report.errors

    lines = [orjson.loads(line) for line in (tmp_path / "B2-TS-01__B__r0.jsonl").read_bytes().splitlines()]
    header, closing = lines[0], lines[-1]
    assert (header["case_id"], header["group"], header["repeat"]) == ("B2-TS-01", "B", 0)
    assert header["source"] == f"run:{MODEL}" and header["model"] == MODEL  # a simulated model made it
    assert header["trace_id"] == f"B2-TS-01__B__r0@{MODEL}"
    assert header["meta"]["canned"] == {"case": "B2-TS-01", "text": ANSWER}  # the endpoint's meta
    assert header["meta"]["run"]["skills"] == ["flight_booking_skill"]
    assert closing["kind"] == "agent_run" and closing["stop"] == "end_turn"
    answers = [line for line in lines if line["kind"] == "assistant_message"]
    assert answers[-1]["content"] == [{"type": "text", "text": ANSWER}]


def test_a_model_its_client_declines_does_not_start(library: CaseLibrary, tmp_path: Path) -> None:
    settings = settings_for(library, tmp_path, "canned:")
    assert settings.client.declines(ModelUse("agent"))
    with pytest.raises(RunSetupError, match="'canned:' cannot run as an agent: give the text"):
        settings.check()


def test_repeats_give_pass_hat_k(library: CaseLibrary, tmp_path: Path) -> None:
    jobs = plan_jobs(select_cases(library, ["B2-TS-01"]), ["A"], 3)
    run_jobs(jobs, settings_for(library, tmp_path), concurrency=3)
    summary = run_summary(trial_verdicts(jobs, tmp_path, library), repeat=3)
    (case,) = summary["reliability"]["cases"]
    # answering without searching fails the case's required calls, three times out of three
    assert (case["trials"], case["passes"], case["pass^k"]["3"], case["flaky"]) == (3, 0, 0.0, False)


def test_a_rerun_skips_complete_jobs_and_redoes_missing_ones(library: CaseLibrary, tmp_path: Path) -> None:
    jobs = plan_jobs(select_cases(library, ["B2-TS-01", "B2-TS-02"]), ["A"], 1)
    settings = settings_for(library, tmp_path)
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
    run_jobs(jobs, settings_for(library, tmp_path))
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
    report = run_jobs(jobs, settings_for(library, tmp_path), concurrency=2, job_runner=slow_job)
    assert report.interrupted
    assert completed_jobs(tmp_path) == {"B2-TS-01__A__r0"}
    assert sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*")) == ["B2-TS-01__A__r0.jsonl"]
