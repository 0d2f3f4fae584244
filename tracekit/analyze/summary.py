"""The ``summary`` of the analyze JSON, gathered one trace at a time.

Each analyzed trace is reduced to a small ``digest`` (in the worker process when ``--jobs`` > 1); the
summary keeps counters, plus one short row per trace that ran a case in a skill group (for the A/B
comparison). It holds:

- totals: traces, tool calls, tool errors, unreadable lines and files, the judge's kept exchanges skipped;
- verdict counts overall, per dimension (``B2``) and per category (``B2-PC``): pass / acceptable / fail /
  pending;
- findings by kind; failure modes by kind (``unattributed``: failing verdicts no seed 004 mode explains)
  and by family (stuck / give_up / fabrication are reported side by side, never summed — seed 004);
  traces whose recovery was untested;
- seed 004's section rates for C4 (循环检测率, 死锁恢复率, 过早放弃率, 放弃合理性);
- ``reliability`` (null without verdicts): pass^k per task and its mean for k = 1 .. the most decided
  repeats of a task, and the flaky tasks (``tracekit.analyze.reliability``). A task is a case in one group
  of one *run* (``run``: what made the trace, from its header, e.g. ``run:scripted:reference``), so two
  runs of a case library are never taken for repeats of each other;
- ``runs``: one row per run: its traces, verdict counts (overall and per dimension), pass rate, mean
  pass^k and its own A/B comparison;
- ``ab``: Group A vs Group B on the case ids both groups ran, paired within each run (pass rate = pass /
  decided verdicts, and pass-or-acceptable rate; mean seed 003 score, steps, output tokens; per case and
  overall; pending verdicts counted apart), or null when no case ran in both groups. ``per_case`` is keyed
  by case id, or ``<case id>@<run>`` when several runs have pairs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable

RESULTS = ("pass", "acceptable", "fail", "pending")


class Row(NamedTuple):
    """What the summary keeps of one trace bound to a case (for pass^k and the A/B comparison)."""

    run: str | None
    case_id: str
    group: str | None
    repeat: int | None
    result: str
    total: float
    steps: int
    tokens: int


def digest(entry: dict[str, Any]) -> dict[str, Any]:
    """What the summary needs of one ``traces[]`` entry."""
    verdict = entry.get("verdict")
    small: dict[str, Any] = {
        "stats": entry["stats"],
        "findings": [finding["kind"] for finding in entry["findings"]],
        "problems": len(entry["problems"]),
        "run": entry.get("run"),
        "group": entry.get("group"),
        "repeat": entry.get("repeat"),
        "verdict": None,
    }
    if verdict is not None:
        scores = verdict["scores"]
        attribution = scores.get("attribution")
        small["verdict"] = {
            "case_id": verdict["case"]["id"],
            "dimension": verdict["case"]["dimension"],
            "category": verdict["case"]["category"],
            "result": verdict["result"],
            "total": scores["tool_use"]["total"],
            "recovery_state": scores["tool_use"]["recovery_state"],
            "steps": scores["efficiency"]["steps"],
            "tokens": scores["efficiency"]["output_tokens"],
            "failure_kind": attribution["failure_kind"] if attribution else None,
            "family": attribution["family"] if attribution else None,
        }
    return small


class Summary:
    """Running totals over analyzed traces."""

    def __init__(self) -> None:
        self.traces = 0
        self.totals: Counter[str] = Counter()
        self.verdicts: Counter[str] = Counter()
        self.by_dimension: dict[str, Counter[str]] = defaultdict(Counter)
        self.by_category: dict[str, Counter[str]] = defaultdict(Counter)
        self.findings: Counter[str] = Counter()
        self.failure_modes: Counter[str] = Counter()
        self.failure_families: Counter[str] = Counter()
        self.recovery_untested = 0
        self.unreadable_files = 0
        self.skipped_judge_exchanges = 0
        self.c4_primary: Counter[str] = Counter()
        self.rows: list[Row] = []
        self.by_run: dict[str | None, Counter[str]] = defaultdict(Counter)
        self.run_dimensions: dict[str | None, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))

    def add(self, small: dict[str, Any]) -> None:
        """Count one trace (its ``digest``)."""
        self.traces += 1
        for key in ("tool_calls", "tool_errors", "llm_calls", "input_tokens", "output_tokens"):
            self.totals[key] += small["stats"].get(key, 0)
        self.totals["problems"] += small["problems"]
        self.findings.update(small["findings"])
        verdict = small["verdict"]
        if verdict is None:
            return
        result = verdict["result"]
        self.verdicts[result] += 1
        self.by_dimension[verdict["dimension"]][result] += 1
        category = f"{verdict['dimension']}-{verdict['category']}" if verdict["dimension"] != "TT" else "TT"
        self.by_category[category][result] += 1
        if result == "fail" and not verdict["failure_kind"]:
            self.failure_modes["unattributed"] += 1
        if verdict["failure_kind"]:
            self.failure_modes[verdict["failure_kind"]] += 1
            self.failure_families[verdict["family"]] += 1
            if verdict["dimension"] == "C4":
                self.c4_primary[f"{verdict['category']}:{verdict['failure_kind']}"] += 1
        if verdict["recovery_state"] == "untested":
            self.recovery_untested += 1
        run = small.get("run")
        self.by_run[run][result] += 1
        self.run_dimensions[run][verdict["dimension"]][result] += 1
        self.rows.append(
            Row(run, verdict["case_id"], small["group"], small.get("repeat"), result, verdict["total"],
                verdict["steps"], verdict["tokens"])
        )  # fmt: skip

    def add_unreadable(self) -> None:
        """Count a file that could not be read at all."""
        self.unreadable_files += 1

    def add_skipped_judge_exchange(self) -> None:
        """Count a kept judge exchange found in a folder (a trace of the judge, not of an agent)."""
        self.skipped_judge_exchanges += 1

    def to_dict(self) -> dict[str, Any]:
        """The ``summary`` object."""
        return {
            "traces": self.traces,
            "bound_to_case": sum(self.verdicts.values()),
            "tool_calls": self.totals["tool_calls"],
            "tool_errors": self.totals["tool_errors"],
            "llm_calls": self.totals["llm_calls"],
            "input_tokens": self.totals["input_tokens"],
            "output_tokens": self.totals["output_tokens"],
            "unreadable_lines": self.totals["problems"],
            "unreadable_files": self.unreadable_files,
            "skipped_judge_exchanges": self.skipped_judge_exchanges,
            "verdicts": _results(self.verdicts),
            "by_dimension": {key: _results(value) for key, value in sorted(self.by_dimension.items())},
            "by_category": {key: _results(value) for key, value in sorted(self.by_category.items())},
            "findings": dict(sorted(self.findings.items())),
            "failure_modes": dict(sorted(self.failure_modes.items())),
            "failure_families": dict(sorted(self.failure_families.items())),
            "recovery_untested": self.recovery_untested,
            "c4_rates": self._c4_rates(),
            "reliability": _reliability(self.rows) if self.rows else None,
            "runs": self._runs() if self.rows else [],
            "ab": ab_comparison(self.rows) if self.rows else None,
        }

    def _runs(self) -> list[dict[str, Any]]:
        """One row per run (by name; traces that name no run last)."""
        rows_of: dict[str | None, list[Row]] = defaultdict(list)
        for row in self.rows:
            rows_of[row.run].append(row)
        entries = []
        for run in sorted(self.by_run, key=lambda name: (name is None, name or "")):
            counts = self.by_run[run]
            decided = sum(counts[result] for result in ("pass", "acceptable", "fail"))
            entries.append({
                "run": run,
                "traces": sum(counts.values()),
                "verdicts": _results(counts),
                "by_dimension": {key: _results(value) for key, value in sorted(self.run_dimensions[run].items())},
                "pass_rate": round(counts["pass"] / decided, 3) if decided else None,
                "mean_pass^k": _reliability(rows_of[run])["mean_pass^k"],
                "ab": ab_comparison(rows_of[run]),
            })  # fmt: skip
        return entries

    def _c4_rates(self) -> dict[str, Any] | None:
        """Seed 004's section rates over C4 traces with a decided verdict (pending left out, counted)."""
        rates: dict[str, Any] = {}
        names = {"LD": "循环检测率", "DR": "死锁恢复率", "PA": "过早放弃率", "AR": "放弃合理性"}
        for category, name in names.items():
            counts = self.by_category.get(f"C4-{category}")
            if not counts:
                continue
            decided = sum(counts[result] for result in ("pass", "acceptable", "fail"))
            if category == "PA":
                hits = self.c4_primary[f"{category}:premature_abandonment"]
            elif category == "AR":
                hits = counts["pass"]
            else:
                hits = counts["pass"] + counts["acceptable"]
            rates[category] = {
                "name": name,
                "rate": round(hits / decided, 3) if decided else None,
                "traces": decided,
                "pending": counts["pending"],
                "lower_is_better": category == "PA",
            }
        return rates or None


def ab_comparison(rows: list[Row]) -> dict[str, Any] | None:
    """Group A vs Group B over the cases both groups ran, paired within each run (repeats averaged per case).

    The pairs and which group did better come from ``tracekit.analyze.reliability.paired_groups`` with only
    ``pass`` counted as a pass; ``better`` is ``undecided`` when a group has no decided verdict."""
    from tracekit.analyze.reliability import paired_groups

    paired_rows = [row for row in rows if row.group in ("A", "B")]
    pairs = paired_groups(_trials(paired_rows))
    if not pairs:
        return None
    by_task: dict[tuple[str | None, str, str | None], list[Row]] = defaultdict(list)
    for row in paired_rows:
        by_task[(row.run, row.case_id, row.group)].append(row)
    several_runs = len({pair["run"] for pair in pairs}) > 1
    cases = {}
    paired: dict[str, list[Row]] = {"A": [], "B": []}
    for pair in sorted(pairs, key=lambda pair: (pair["case_id"], pair["run"] or "")):
        run, case_id = pair["run"], pair["case_id"]
        groups = {group: by_task[(run, case_id, group)] for group in ("A", "B")}
        for group, group_rows in groups.items():
            paired[group].extend(group_rows)
        figures = {group: _group_figures(group_rows) for group, group_rows in groups.items()}
        delta = (figures["B"]["pass_rate"] or 0) - (figures["A"]["pass_rate"] or 0)
        key = f"{case_id}@{run}" if several_runs else case_id
        cases[key] = {"case_id": case_id, "run": run, **figures, "pass_rate_delta": round(delta, 3),
                      "better": pair["better"] or "undecided"}  # fmt: skip
    overall = {group: _group_figures(group_rows) for group, group_rows in paired.items()}
    better = Counter(case["better"] for case in cases.values())
    return {
        "cases": len(cases),
        "A": overall["A"],
        "B": overall["B"],
        "pass_rate_delta": round((overall["B"]["pass_rate"] or 0) - (overall["A"]["pass_rate"] or 0), 3),
        "cases_better": {"A": better["A"], "B": better["B"], "tie": better["tie"], "undecided": better["undecided"]},
        "per_case": cases,
    }


def _reliability(rows: list[Row]) -> dict[str, Any]:
    """pass^k for k = 1 .. the most decided repeats of a task (``tracekit.analyze.reliability``; imported only
    when traces are bound to cases, so that plain analysis starts fast)."""
    from tracekit.analyze.reliability import reliability_summary

    return reliability_summary(_trials(rows), ks=None)


def _trials(rows: Iterable[Row]) -> list[dict[str, Any]]:
    """Rows as the trials ``tracekit.analyze.reliability`` reads."""
    return [{"run": row.run, "case_id": row.case_id, "group": row.group, "repeat": row.repeat, "verdict": row.result}
            for row in rows]  # fmt: skip


def _group_figures(rows: list[Row]) -> dict[str, Any]:
    decided = [row for row in rows if row.result != "pending"]
    passed = [row for row in decided if row.result == "pass"]
    usable = [row for row in decided if row.result in ("pass", "acceptable")]
    return {
        "traces": len(rows),
        "pending": len(rows) - len(decided),
        "pass_rate": round(len(passed) / len(decided), 3) if decided else None,
        "pass_or_acceptable_rate": round(len(usable) / len(decided), 3) if decided else None,
        "results": _results(Counter(row.result for row in rows)),
        "mean_tool_use_total": round(sum(row.total for row in rows) / len(rows), 2),
        "mean_steps": round(sum(row.steps for row in rows) / len(rows), 2),
        "mean_output_tokens": round(sum(row.tokens for row in rows) / len(rows), 1),
    }


def _results(counts: Counter[str]) -> dict[str, int]:
    return {result: counts[result] for result in RESULTS}
