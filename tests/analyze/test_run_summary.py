"""`tracekit run`'s summary decides verdicts through the same door as `tracekit analyze`: the same analysis
and the same kept judge verdicts, so the run's summary and an analysis of its folder agree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tracekit.analyze.results import AnalyzeSettings, build_results
from tracekit.analyze.run_summary import format_summary, run_summary, trial_verdicts
from tracekit.analyze.sources import SourceNames
from tracekit.application import kept_judge, load_case_set
from tracekit.cases import load_cases

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "recordings" / "reference"


@dataclass
class Job:
    file_name: str


def test_the_run_summary_and_analyze_give_the_same_verdicts() -> None:
    files = sorted(path for path in RUN.glob("*.jsonl") if path.name.startswith(("C4-AR", "B2-TS")))
    judge, _ = kept_judge([RUN])
    trials = trial_verdicts([Job(path.name) for path in files], RUN, load_cases(ROOT / "cases"), judge)
    settings = AnalyzeSettings(load_case_set(ROOT / "cases"), judge=judge, sources=SourceNames.of([RUN]))
    analyzed = build_results([str(path) for path in files], settings)
    assert [(trial["case_id"], trial["verdict"]) for trial in trials] == [
        (entry.case_id, entry.result) for entry in analyzed.traces]
    assert {trial["verdict"] for trial in trials} == {"pass"}  # the judge-only C4-AR cases are not pending
    summary = run_summary(trials, repeat=1)
    assert summary["verdicts"] == {"pass": len(files)}
    assert format_summary(summary)[0] == f"{len(files)} traces: {len(files)} pass"


def test_a_trace_that_cannot_be_analyzed_is_a_trial_without_a_verdict(tmp_path: Path) -> None:
    (tmp_path / "broken.jsonl").write_text('{"not": "a trace"}\n', encoding="utf-8")
    [trial] = trial_verdicts([Job("broken.jsonl"), Job("never-written.jsonl")], tmp_path,
                             load_cases(ROOT / "cases"))
    assert trial["verdict"] is None and "not a trace" in trial["error"]
