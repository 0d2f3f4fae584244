"""The summary ``tracekit run`` prints and writes (``<out>/run-summary.json``): verdicts of the run's traces,
pass^k per case with flaky cases marked, and Group A vs Group B on the same cases.

Verdicts come from the offline analysis (``tracekit.analyze``) of each job's trace against the case
library; ``pending`` (the case needs the judge) is neither a pass nor a failure for pass^k.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tracekit.cases.loader import CaseLibrary
from tracekit.runner.jobs import Job
from tracekit.analyze.reliability import paired_groups, reliability_summary


def trial_verdicts(jobs: Iterable[Job], out_dir: Path, library: CaseLibrary) -> list[dict[str, Any]]:
    """One entry per job whose trace exists: case, group, repeat, verdict (None when unavailable)."""
    from tracekit.analyze.results import analyze_trace
    from tracekit.trace import load_trace

    trials = []
    for job in jobs:
        path = out_dir / job.file_name
        if not path.exists():
            continue
        entry = analyze_trace(load_trace(path, fast=True), library=library)
        verdict = entry.get("verdict") or {}
        trials.append({"case_id": job.case.id, "group": job.group, "repeat": job.repeat, "trace": path.name,
                       "verdict": verdict.get("result"),
                       "failed_checks": [check.get("check") for check in verdict.get("checks", [])
                                         if check.get("result") == "fail"]})
    return trials


def run_summary(trials: list[dict[str, Any]], repeat: int) -> dict[str, Any]:
    """Counts by verdict, reliability (pass^1..pass^repeat) and the A/B pairs."""
    return {
        "trials": len(trials),
        "verdicts": dict(Counter(str(trial["verdict"]) for trial in trials)),
        "reliability": reliability_summary(trials, ks=range(1, max(1, repeat) + 1)),
        "groups": paired_groups(trials),
    }


def format_summary(summary: dict[str, Any]) -> list[str]:
    """Readable lines of a run summary."""
    lines = [f"{summary['trials']} traces: " + ", ".join(f"{count} {verdict}"
                                                         for verdict, count in sorted(summary["verdicts"].items()))]
    reliability = summary["reliability"]
    means = ", ".join(f"pass^{k} {_rate(value)}" for k, value in reliability["mean_pass^k"].items())
    if means:
        lines.append(f"mean over cases: {means}")
    if reliability["flaky"]:
        flaky = [f"{item['case_id']}/{item['group'] or '-'}" for item in reliability["flaky"]]
        lines.append("flaky: " + ", ".join(flaky))
    pairs = summary["groups"]
    if pairs:
        better = Counter(pair["better"] for pair in pairs)
        lines.append(f"Group A vs B on {len(pairs)} cases: B better {better.get('B', 0)}, A better "
                     f"{better.get('A', 0)}, tie {better.get('tie', 0)}, undecided {better.get(None, 0)}")
        for pair in pairs:
            if pair["better"] in ("A", "B"):
                lines.append(f"  {pair['case_id']}: A {'/'.join(pair['A']['verdicts'])}  "
                             f"B {'/'.join(pair['B']['verdicts'])}  ({pair['better']} better)")
    return lines


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
