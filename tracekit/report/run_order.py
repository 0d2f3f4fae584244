"""Which runs a report lists and in what order: every ``traces[]`` entry as a ``Run``, labelled with its run
when the results hold several; case order (task2 before task10), and the traces table's failures first.

Example::

    runs = runs_from_results(results)        # results: tracekit.results.model.Results
    table = failures_first(runs)             # fail and guard stops, pending, acceptable, pass; then unbound
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tracekit.report.runs import Run
from tracekit.results.model import Results

__all__ = ["failures_first", "label_runs", "natural_key", "run_names", "runs_from_results", "sort_runs"]

#: Order of the traces table: what a reviewer must look at first (a session the guard stopped counts as a
#: failure), then what is undecided, then the rest; traces bound to no case last.
REVIEW_ORDER = {"fail": 0, "pending": 1, "acceptable": 2, "pass": 3}


def runs_from_results(results: Results) -> list[Run]:
    """Every ``traces[]`` entry as a ``Run``, in the order given (labels name the run when there are several)."""
    return label_runs([Run(position, entry) for position, entry in enumerate(results.traces)])


def label_runs(runs: list[Run]) -> list[Run]:
    """``runs``, each set to name its run in its label when they hold several runs."""
    if len(run_names(runs)) > 1:
        for run in runs:
            run.show_run = True
    return runs


def run_names(runs: Iterable[Run]) -> list[str | None]:
    """The distinct runs of traces bound to cases, sorted by name (None, "no run named", last)."""
    names = {run.run_name for run in runs if run.case_id is not None}
    return sorted(names, key=lambda name: (name is None, name or ""))


def sort_runs(runs: Iterable[Run]) -> list[Run]:
    """Runs bound to cases first (by case, run, group, repeat), then the others by trace id."""
    def key(run: Run) -> tuple[Any, ...]:
        bound = run.case_id is not None
        return (
            0 if bound else 1,
            natural_key(run.case_id or ""),
            run.run_name or "",
            run.group or "",
            -1 if run.repeat is None else run.repeat,
            run.trace_id,
            run.position,
        )

    return sorted(runs, key=key)


def failures_first(runs: Iterable[Run]) -> list[Run]:
    """The traces table's order: fail (and sessions the guard stopped), pending, acceptable, pass, then traces
    bound to no case; within each, the order of ``sort_runs`` (case id, run, group, repeat)."""
    ordered = sort_runs(runs)

    def rank(run: Run) -> int:
        if run.key.stopped:
            return 0
        return REVIEW_ORDER.get(run.result or "", len(REVIEW_ORDER))

    return sorted(ordered, key=rank)  # stable: sort_runs' order within a rank


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key that puts task2 before task10 (digit runs compared as numbers)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(text) if part)


_DIGITS = re.compile(r"(\d+)")
