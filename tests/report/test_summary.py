"""Counting for the index: tallies, pass^k, group A vs B, baseline diff, and the tolerant results reader."""

from __future__ import annotations

from typing import Any

import pytest

from tracekit.report import runs_from_results
from tracekit.report.compare import compare_groups, diff_baseline
from tracekit.report.summary import findings_by_kind, pass_hat_k, tally_by_dimension


def _entry(case_id: str | None, group: str | None, repeat: int | None, result: str | None, **extra: Any) -> dict:
    entry: dict[str, Any] = {
        "trace_id": f"{case_id}-{group}-{repeat}", "case_id": case_id, "group": group, "repeat": repeat,
        "stats": {"tool_calls": 2, "input_tokens": 100, "output_tokens": 10},
        "tool_calls": [], "findings": [], "verdict": None if result is None else {"result": result, "checks": []},
    }
    entry.update(extra)
    return entry


def test_pass_hat_k_is_the_unbiased_estimate() -> None:
    traces = [_entry("B2-PC-01", "A", n, r) for n, r in enumerate(["pass", "pass", "fail"])]
    traces += [_entry("B2-PC-02", "A", n, "pass") for n in range(3)]
    traces += [_entry("B2-PC-02", "A", 9, "pending")]  # pending repeats are not judged
    rows = pass_hat_k(runs_from_results({"traces": traces}))
    assert [row.k for row in rows] == [1, 2, 3]
    assert rows[0].overall == pytest.approx((2 / 3 + 1) / 2)
    assert rows[1].overall == pytest.approx((1 / 3 + 1) / 2)  # C(2,2)/C(3,2) = 1/3
    assert rows[2].overall == pytest.approx(0.5)
    assert rows[2].by_group == {"A": pytest.approx(0.5)}
    assert rows[0].tasks == 2


def test_tally_by_dimension_and_category() -> None:
    traces = [_entry("B2-PC-01", "A", 0, "pass"), _entry("B2-TC-01", "A", 0, "fail"),
              _entry("TT-03", None, None, "acceptable"), _entry(None, None, None, None)]
    rows = tally_by_dimension(runs_from_results({"traces": traces}))
    assert [row.tally.label for row in rows] == ["B2", "TT"]
    assert [c.label for c in rows[0].categories] == ["PC", "TC"]
    assert rows[0].tally.counts == {"pass": 1, "acceptable": 0, "fail": 1, "pending": 0}
    assert rows[0].tally.pass_rate == 0.5


def test_group_comparison_on_shared_cases() -> None:
    traces = [
        _entry("B2-PC-01", "A", 0, "fail"), _entry("B2-PC-01", "B", 0, "pass"),
        _entry("B2-PC-02", "A", 0, "pass"), _entry("B2-PC-02", "B", 0, "acceptable"),
        _entry("B2-PC-03", "A", 0, "pass"), _entry("B2-PC-03", "B", 0, "pass"),
        _entry("B2-PC-04", "A", 0, "pass"),  # only in A: not compared
    ]
    comparison = compare_groups(runs_from_results({"traces": traces}))
    assert comparison is not None
    assert (comparison.a_name, comparison.b_name, comparison.shared_cases) == ("A", "B", 3)
    assert comparison.overall.pass_rate_delta == pytest.approx(0.0)  # 2/3 pass each
    assert [(c.case_id, c.better) for c in comparison.changed] == [("B2-PC-02", False), ("B2-PC-01", True)]
    assert compare_groups(runs_from_results({"traces": traces[:1]})) is None


def test_baseline_diff_matches_case_group_repeat() -> None:
    before = [_entry("B2-PC-01", "A", 0, "pass"), _entry("B2-PC-02", "A", 0, "fail"),
              _entry("B2-PC-03", "A", 0, "pass"), _entry("B2-PC-09", "A", 0, "pass")]
    now = [_entry("B2-PC-01", "A", 0, "fail"), _entry("B2-PC-02", "A", 0, "pass"),
           _entry("B2-PC-03", "A", 0, "pending"), _entry("B2-PC-05", "A", 0, "pass")]
    diff = diff_baseline(runs_from_results({"traces": now}), runs_from_results({"traces": before}))
    assert [c.run.case_id for c in diff.regressions] == ["B2-PC-01"]
    assert [c.run.case_id for c in diff.improvements] == ["B2-PC-02"]
    assert [r.case_id for r in diff.new] == ["B2-PC-05"] and [r.case_id for r in diff.missing] == ["B2-PC-09"]
    assert diff.unchanged == 1  # pending is not a verdict change


def test_reader_tolerates_other_shapes() -> None:
    entry = _entry("Q1-TF-02", "B", 1, None, verdict={
        "result": "fail",
        "checks": [{"check": "answer faithful", "passed": False, "message": "claims 3 results"},
                   {"id": "no_tool", "status": "pass"}, "not a check"],
        "judge": {"verdict": "fail", "rationale": "编造了数据", "quotes": [{"text": "共有 3 家酒店"}]},
        "failure_mode": {"kind": "hallucination"},
    }, findings=[{"kind": "retry_storm", "calls": [1, "x", True]}], meta=None)
    (run,) = runs_from_results({"traces": [entry, "junk"]})
    assert (run.dimension, run.category, run.result) == ("Q1", "TF", "fail")
    assert [(c.name, c.result, c.evidence) for c in run.checks] == [
        ("answer faithful", "fail", "claims 3 results"), ("no_tool", "pass", "")]
    assert run.judgement is not None and run.judgement.quotes == ["共有 3 家酒店"]
    assert run.judgement.reasoning == "编造了数据" and run.judgement.result == "fail"
    assert run.failure_modes == ["hallucination"]
    assert run.findings[0].calls == [1] and run.findings[0].severity == "warning"
    assert run.label == "Q1-TF-02 B#1"


def test_findings_by_kind_counts_and_orders() -> None:
    traces = [
        _entry("B2-PC-01", "A", 0, "pass", findings=[{"kind": "repeated_call", "severity": "warning", "calls": [1]},
                                                      {"kind": "repeated_call", "severity": "error", "calls": [2]}]),
        _entry("B2-PC-02", "A", 0, "pass", findings=[{"kind": "unused_output", "severity": "info", "calls": [0]}]),
        _entry("B2-PC-03", "A", 0, "pass", findings=[{"kind": "unused_output", "severity": "info", "calls": [0]}]),
        _entry("B2-PC-04", "A", 0, "pass", findings=[{"kind": "alternating_loop", "calls": [0]}]),
    ]
    groups = findings_by_kind(runs_from_results({"traces": traces}))
    assert [(g.kind, g.count, len(g.runs), g.severity) for g in groups] == [
        ("repeated_call", 2, 1, "error"), ("unused_output", 2, 2, "info"), ("alternating_loop", 1, 1, "warning")]
