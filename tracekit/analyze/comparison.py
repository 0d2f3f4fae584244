"""Group A vs Group B: the skill A/B comparison of the analyze JSON's ``summary.ab`` (and of each run's).

Pairs come from ``tracekit.analyze.reliability.paired_groups``: a case (within one run) that both groups
ran. A group's pass rate is pass / decided verdicts and which group did better follows it: only ``pass``
counts as a pass here (the rule and why: ``tracekit.analyze.reliability``). ``pass_or_acceptable_rate``
stands beside it, with the groups' costs (seed 003 total, steps, answer tokens, all tokens, tool calls).

Figures are given per case, overall and per dimension; the reports show them as they are.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any, NamedTuple

from tracekit.analyze.reliability import paired_groups
from tracekit.results.summary import (
    RESULTS,
    ABComparison,
    CasePair,
    CasesBetter,
    GroupFigures,
    GroupPair,
    VerdictCounts,
    written_rate,
)


class Row(NamedTuple):
    """What the summary keeps of one trace bound to a case (for pass^k and the A/B comparison)."""

    run: str | None
    case_id: str
    group: str | None
    repeat: int | None
    result: str
    total: float
    """Seed 003 tool-use total."""
    steps: int
    """Seed 001 steps (judged tool calls)."""
    tokens: int
    """Seed 001 answer tokens."""
    dimension: str = "?"
    all_tokens: int = 0
    """Input plus output tokens of the trace."""
    tool_calls: int = 0
    """Tool calls of the trace, history included."""


def trials(rows: Iterable[Row]) -> list[dict[str, Any]]:
    """Rows as the trials ``tracekit.analyze.reliability`` reads."""
    return [{"run": row.run, "case_id": row.case_id, "group": row.group, "repeat": row.repeat, "verdict": row.result}
            for row in rows]  # fmt: skip


def ab_comparison(rows: list[Row]) -> ABComparison | None:
    """Group A vs Group B over the cases both groups ran, paired within each run (repeats averaged per case);
    None when no case ran in both groups. ``better`` is ``undecided`` when a group has no decided verdict."""
    paired_rows = [row for row in rows if row.group in ("A", "B")]
    pairs = paired_groups(trials(paired_rows))
    if not pairs:
        return None
    by_task: dict[tuple[str | None, str, str | None], list[Row]] = defaultdict(list)
    for row in paired_rows:
        by_task[(row.run, row.case_id, row.group)].append(row)
    several_runs = len({pair["run"] for pair in pairs}) > 1
    cases: dict[str, CasePair] = {}
    paired: dict[str, list[Row]] = {"A": [], "B": []}
    for pair in sorted(pairs, key=lambda pair: (pair["case_id"], pair["run"] or "")):
        run, case_id = pair["run"], pair["case_id"]
        a_rows, b_rows = by_task[(run, case_id, "A")], by_task[(run, case_id, "B")]
        paired["A"].extend(a_rows)
        paired["B"].extend(b_rows)
        key = f"{case_id}@{run}" if several_runs else case_id
        a, b = group_figures(a_rows), group_figures(b_rows)
        cases[key] = CasePair(case_id=case_id, run=run, A=a, B=b, pass_rate_delta=_delta(a, b),
                              better=pair["better"] or "undecided")  # fmt: skip
    a, b = group_figures(paired["A"]), group_figures(paired["B"])
    better = Counter(case.better for case in cases.values())
    dimensions = sorted({row.dimension for row in paired["A"] + paired["B"]})
    by_dimension = {}
    for dimension in dimensions:
        a_dim = group_figures([row for row in paired["A"] if row.dimension == dimension])
        b_dim = group_figures([row for row in paired["B"] if row.dimension == dimension])
        by_dimension[dimension] = GroupPair(A=a_dim, B=b_dim, pass_rate_delta=_delta(a_dim, b_dim))
    return ABComparison(
        cases=len(cases),
        A=a,
        B=b,
        pass_rate_delta=_delta(a, b),
        cases_better=CasesBetter(A=better["A"], B=better["B"], tie=better["tie"], undecided=better["undecided"]),
        per_case=cases,
        by_dimension=by_dimension,
    )


def group_figures(rows: list[Row]) -> GroupFigures:
    """One group's figures over its traces (an empty group has null rates and zero means)."""
    decided = [row for row in rows if row.result != "pending"]
    usable = [row for row in decided if row.result in ("pass", "acceptable")]
    count = len(rows) or 1
    tallied = Counter(row.result for row in rows)
    results = VerdictCounts.model_validate({result: tallied[result] for result in RESULTS})
    return GroupFigures(
        traces=len(rows),
        pending=len(rows) - len(decided),
        pass_rate=written_rate(results.pass_rate),
        pass_or_acceptable_rate=round(len(usable) / len(decided), 3) if decided else None,
        results=results,
        mean_tool_use_total=round(sum(row.total for row in rows) / count, 2),
        mean_steps=round(sum(row.steps for row in rows) / count, 2),
        mean_output_tokens=round(sum(row.tokens for row in rows) / count, 1),
        mean_tokens=round(sum(row.all_tokens for row in rows) / count, 3) if rows else None,
        mean_tool_calls=round(sum(row.tool_calls for row in rows) / count, 3) if rows else None,
    )


def _delta(a: GroupFigures, b: GroupFigures) -> float:
    """B's pass rate minus A's, a missing rate counted as 0 (as the JSON has always given it)."""
    return round((b.pass_rate or 0) - (a.pass_rate or 0), 3)
