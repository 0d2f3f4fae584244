"""What the report's index shows: the traces table's columns, the headline of what failed, and the context
of the index template (the summary sections above the table), shared by the folder report's index
(``tracekit.report.html``) and the single file (``tracekit.report.single``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracekit.report.compare import BaselineDiff, GroupComparison
from tracekit.report.runs import Run
from tracekit.report.summary import (
    PassK,
    failure_modes_by_kind,
    findings_by_kind,
    outcomes_by_value,
    overall_tally,
    tally_by_dimension,
    tally_by_run,
)
from tracekit.results.model import Results

#: Rows of the regression / change tables on the index before "… and N more".
TABLE_LIMIT = 50
#: Trace links shown inline per finding kind on the index (the kind's own page lists them all).
INLINE_LINKS = 12
#: Verdict badges shown per group in the index's table of changed cases (more: counts).
CHANGE_BADGES = 6

#: Failing traces named in the index's first line (the traces table lists them all, first).
HEADLINE_RUNS = 8


@dataclass(frozen=True)
class Column:
    """A column of the traces table: its name (the ``trace_cell`` macro's branch in ``_macros.html.j2``
    renders its cells), its header, and whether it holds numbers (right-aligned)."""

    name: str
    label: str
    numeric: bool = False
    title: str = ""
    """The header's tooltip, where the label is short for something longer."""


#: The traces table of the index, the finding / mode / outcome lists and the case pages, left to right;
#: widths in ``style.css`` (``col.col-<name>``). ``outcome`` is shown only when some trace has one.
TRACE_COLUMNS = (
    Column("trace", "trace"),
    Column("verdict", "verdict"),
    Column("group", "group"),
    Column("repeat", "repeat"),
    Column("outcome", "outcome"),
    Column("tool_calls", "calls", numeric=True, title="tool calls"),
    Column("errors", "errors", numeric=True, title="tool calls whose result was an error"),
    Column("tokens", "tokens", numeric=True),
    Column("findings", "findings"),
    Column("why", "why"),
    Column("diagnosis", "went wrong at", title="the critical step of a failed trace and its category"),
    Column("case", "case"),
)


@dataclass
class Headline:
    """The index's first line: what failed (fail verdicts, sessions the guard stopped, pending verdicts),
    with the first failing traces named."""

    failing: list[Run]
    """Failing traces and stopped sessions, in the traces table's order."""
    stopped: int
    pending: int

    @classmethod
    def of(cls, runs: Sequence[Run]) -> Headline:
        """The headline of a report's runs (given in the traces table's order)."""
        failing = [run for run in runs if run.result == "fail" or run.guard_stop is not None]
        return cls(failing, sum(1 for run in runs if run.guard_stop is not None),
                   sum(1 for run in runs if run.result == "pending"))


def trace_columns(runs: Sequence[Run]) -> list[Column]:
    """The traces table's columns for these runs: ``outcome`` only when an importer kept one (tau-bench's
    ``reward``): a trace tracekit recorded has none, and a column of dashes tells a reviewer nothing."""
    with_outcome = any(run.outcome for run in runs)
    return [column for column in TRACE_COLUMNS if column.name != "outcome" or with_outcome]


def index_context(
    runs: Sequence[Run],
    ordered: Sequence[Run],
    results: Results,
    comparison: GroupComparison | None,
    baseline: BaselineDiff | None,
    baseline_name: str,
    pass_k: list[PassK],
) -> dict[str, Any]:
    """What the index shows above the traces table (``ordered``: the runs in the table's order)."""
    summary = results.summary
    return {
        "overall": overall_tally(summary),
        "unbound": sum(1 for run in runs if run.case_id is None),
        "dimensions": tally_by_dimension(summary, per_run=True),
        "run_rows": tally_by_run(summary, pass_k, comparison),
        "comparison": comparison,
        "baseline": baseline,
        "baseline_name": baseline_name,
        "pass_k": pass_k,
        "findings": findings_by_kind(runs),
        "failure_modes": failure_modes_by_kind(runs),
        "outcomes": outcomes_by_value(runs),
        "limit": TABLE_LIMIT,
        "inline_links": INLINE_LINKS,
        "change_badges": CHANGE_BADGES,
        "runs_total": len(runs),
        "headline": Headline.of(ordered),
        "headline_runs": HEADLINE_RUNS,
        "diagnosis_judge": getattr(summary, "diagnosis_judge", None),
    }
