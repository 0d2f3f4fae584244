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
- ``ab``: Group A vs Group B on the case ids both groups ran (pass rate = pass / decided verdicts, and
  pass-or-acceptable rate; mean seed 003 score, steps, output tokens; per case and overall; pending
  verdicts counted apart), or null when one group is missing.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

RESULTS = ("pass", "acceptable", "fail", "pending")


def digest(entry: dict[str, Any]) -> dict[str, Any]:
    """What the summary needs of one ``traces[]`` entry."""
    verdict = entry.get("verdict")
    small: dict[str, Any] = {
        "stats": entry["stats"],
        "findings": [finding["kind"] for finding in entry["findings"]],
        "problems": len(entry["problems"]),
        "group": entry.get("group"),
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
        self.groups: list[tuple[str, str, str, float, int, int]] = []

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
        if small["group"] in ("A", "B"):
            self.groups.append(
                (verdict["case_id"], small["group"], result, verdict["total"], verdict["steps"], verdict["tokens"])
            )

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
            "ab": ab_comparison(self.groups),
        }

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


def ab_comparison(rows: list[tuple[str, str, str, float, int, int]]) -> dict[str, Any] | None:
    """Group A vs Group B over the case ids both groups ran (repeats averaged per case)."""
    per_case: dict[str, dict[str, list[tuple[str, float, int, int]]]] = defaultdict(lambda: {"A": [], "B": []})
    for case_id, group, result, total, steps, tokens in rows:
        per_case[case_id][group].append((result, total, steps, tokens))
    paired = {case_id: groups for case_id, groups in per_case.items() if groups["A"] and groups["B"]}
    if not paired:
        return None
    cases = {}
    for case_id, groups in sorted(paired.items()):
        figures = {group: _group_figures(runs) for group, runs in groups.items()}
        delta = (figures["B"]["pass_rate"] or 0) - (figures["A"]["pass_rate"] or 0)
        cases[case_id] = {**figures, "pass_rate_delta": round(delta, 3),
                          "better": "B" if delta > 0 else "A" if delta < 0 else "tie"}
    overall = {
        group: _group_figures([run for groups in paired.values() for run in groups[group]]) for group in ("A", "B")
    }
    better = Counter(case["better"] for case in cases.values())
    return {
        "cases": len(cases),
        "A": overall["A"],
        "B": overall["B"],
        "pass_rate_delta": round((overall["B"]["pass_rate"] or 0) - (overall["A"]["pass_rate"] or 0), 3),
        "cases_better": {"A": better["A"], "B": better["B"], "tie": better["tie"]},
        "per_case": cases,
    }


def _group_figures(runs: list[tuple[str, float, int, int]]) -> dict[str, Any]:
    decided = [run for run in runs if run[0] != "pending"]
    passed = [run for run in decided if run[0] == "pass"]
    usable = [run for run in decided if run[0] in ("pass", "acceptable")]
    return {
        "traces": len(runs),
        "pending": len(runs) - len(decided),
        "pass_rate": round(len(passed) / len(decided), 3) if decided else None,
        "pass_or_acceptable_rate": round(len(usable) / len(decided), 3) if decided else None,
        "results": _results(Counter(run[0] for run in runs)),
        "mean_tool_use_total": round(sum(run[1] for run in runs) / len(runs), 2),
        "mean_steps": round(sum(run[2] for run in runs) / len(runs), 2),
        "mean_output_tokens": round(sum(run[3] for run in runs) / len(runs), 1),
    }


def _results(counts: Counter[str]) -> dict[str, int]:
    return {result: counts[result] for result in RESULTS}
