"""The summary ``tracekit run`` prints and writes (``<out>/run-summary.json``): verdicts of the run's traces,
pass^k per task with flaky tasks marked, and Group A vs Group B on the same cases.

Verdicts come from the same analysis as ``tracekit analyze`` (``results.analyze_file`` with the settings
the caller gives, kept judge verdicts included), so a run's summary and an analysis of its folder agree;
pass^k and the pairing are ``tracekit.analyze.reliability``'s, with its one rule of what counts as a pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tracekit.analyze.reliability import paired_groups, reliability_summary
from tracekit.analyze.results import AnalyzeSettings, analyze_file
from tracekit.analyze.sources import SourceNames

if TYPE_CHECKING:
    from tracekit.cases.loader import CaseLibrary


class PlannedTrial(Protocol):
    """A job of a run, as far as its summary needs it (``tracekit.runner.jobs.Job`` is one)."""

    @property
    def file_name(self) -> str:
        """The trace file's name in the run folder."""
        ...


def trial_verdicts(
    jobs: Iterable[PlannedTrial], out_dir: Path, library: CaseLibrary, judge: Any = None
) -> list[dict[str, Any]]:
    """One entry per job whose trace exists: case, group, repeat, trace file, verdict (None when the trace
    could not be analyzed: ``error`` says why) and the failed checks.

    ``library`` is the ``CaseLibrary`` the run used; ``judge`` a ``judge_store.JudgeProvider`` for cases
    scored by the judge (None: they stay pending, as in an analysis without kept verdicts)."""
    settings = AnalyzeSettings(library=library.case_set(), judge=judge, sources=SourceNames.of([out_dir]),
                               keep_results=True)  # fmt: skip
    trials: list[dict[str, Any]] = []
    for job in jobs:
        path = Path(out_dir) / job.file_name
        if not path.exists():
            continue
        outcome = analyze_file(str(path), settings)
        if outcome.result is None:
            trials.append({"case_id": None, "group": None, "repeat": None, "trace": path.name, "verdict": None,
                           "failed_checks": [], "error": outcome.error or outcome.skipped})
            continue
        entry = outcome.result
        verdict = entry.verdict
        trials.append({"case_id": entry.case_id, "group": entry.group, "repeat": entry.repeat, "trace": path.name,
                       "verdict": verdict.result if verdict is not None else None,
                       "failed_checks": [check.check for check in verdict.checks if check.result == "fail"]
                       if verdict is not None else []})  # fmt: skip
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
        lines.append(f"Group A vs B on {len(pairs)} cases (pass rates, pass only): B better {better.get('B', 0)}, "
                     f"A better {better.get('A', 0)}, tie {better.get('tie', 0)}, undecided {better.get(None, 0)}")
        for pair in pairs:
            if pair["better"] in ("A", "B"):
                lines.append(f"  {pair['case_id']}: A {'/'.join(pair['A']['verdicts'])}  "
                             f"B {'/'.join(pair['B']['verdicts'])}  ({pair['better']} better)")
    return lines


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
