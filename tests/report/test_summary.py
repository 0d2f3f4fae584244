"""Counting for the index: tallies, pass^k, group A vs B, baseline diff, and the tolerant results reader."""

from __future__ import annotations

from typing import Any

import pytest

from tracekit.report import runs_from_results
from tracekit.report.compare import compare_groups, diff_baseline
from tracekit.report.summary import findings_by_kind, pass_hat_k, tally_by_dimension, tally_by_run


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


def _two_runs() -> list[dict[str, Any]]:
    """A reference and a flawed run of the same cases, one repeat each (as recordings/ holds them), plus a
    second repeat of B2-PC-01 A in the reference run."""
    traces = []
    for run, results in {"run:scripted:reference": ("pass", "pass", "pass"),
                         "run:scripted:flawed": ("fail", "fail", "pass")}.items():
        jobs = [("B2-PC-01", "A"), ("B2-PC-01", "B"), ("B2-PC-02", "A")]
        for (case_id, group), result in zip(jobs, results, strict=True):
            traces.append(_entry(case_id, group, 0, result, run=run, trace_id=f"{case_id}-{group}@{run}"))
    traces.append(_entry("B2-PC-01", "A", 1, "pass", run="run:scripted:reference", trace_id="B2-PC-01-A-1@ref"))
    return traces


def test_runs_are_never_repeats_of_each_other() -> None:
    runs = runs_from_results({"traces": _two_runs()})
    rows = pass_hat_k(runs)
    # Pooled, B2-PC-01 A would be 3 repeats (pass, fail, pass) and pass^2 1/3; per run it is 1 and (flawed) n/a.
    assert [row.k for row in rows] == [1, 2]
    assert rows[1].overall == 1.0 and rows[1].tasks == 1
    assert rows[0].by_run == {"scripted:flawed": pytest.approx(1 / 3), "scripted:reference": 1.0}
    rows_by_run = {row.name: row for row in tally_by_run(runs, rows)}
    assert rows_by_run["scripted:flawed"].tally.counts == {"pass": 1, "acceptable": 0, "fail": 2, "pending": 0}
    assert rows_by_run["scripted:reference"].pass_k == {1: 1.0, 2: 1.0}
    assert runs[0].label == "B2-PC-01 A#0 · scripted:reference"
    assert tally_by_run(runs_from_results({"traces": _two_runs()[:3]}), rows) == []  # one run: no rows


def test_groups_are_compared_within_a_run() -> None:
    comparison = compare_groups(runs_from_results({"traces": _two_runs()}))
    assert comparison is not None and comparison.shared_cases == 2  # B2-PC-01 in each run
    assert comparison.changed == []  # reference A pass / B pass; flawed A fail / B fail: no change in a run
    assert [(row.label, row.a.tally.counts["pass"], row.b.tally.counts["pass"]) for row in comparison.runs] == [
        ("scripted:flawed", 0, 0), ("scripted:reference", 2, 1)]


def test_baseline_matches_by_run_when_both_sides_name_runs() -> None:
    now = runs_from_results({"traces": _two_runs()})
    diff = diff_baseline(now, runs_from_results({"traces": _two_runs()}))
    assert (diff.regressions, diff.improvements, diff.unchanged) == ([], [], len(now))
    legacy = [{**entry, "run": None} for entry in _two_runs() if "reference" in str(entry["run"])]
    old = diff_baseline(now, runs_from_results({"traces": legacy}))  # results from before runs were named
    assert (old.unchanged, old.missing) == (4, [])  # matched by case, group and repeat alone
    assert {run.run_name for run in old.new} == {"run:scripted:flawed"}


def test_markdown_junit_and_index_show_the_runs(tmp_path: Any) -> None:
    from tracekit.report import render_junit, render_markdown, write_reports

    results = {"tracekit": "0", "traces": _two_runs()}
    runs = runs_from_results(results)
    markdown = render_markdown(runs, comparison=compare_groups(runs), pass_k=pass_hat_k(runs))
    assert "| `scripted:flawed` | 1 | 0 | 2 | 0 | 33% | 33% |" in markdown
    assert "- `scripted:reference`: k=1 100% · k=2 100%" in markdown
    assert 'name="B2-PC-01[A]#0 @scripted:flawed"' in render_junit(runs)
    index = write_reports(results, tmp_path / "html").html[0].read_text(encoding="utf-8")
    assert 'id="runs"' in index and "run <span class=\"mono\">scripted:reference</span>" in index
