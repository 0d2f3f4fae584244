"""What the index shows: tallies, pass^k, group A vs B and the baseline diff, all read from the summary analyze
computes (``tracekit.analyze.summary``), and the results model refusing what is not a results JSON."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from report_support import complete, entry, judged_check, verdict

from tracekit.errors import ResultsError
from tracekit.report import runs_from_results
from tracekit.report.compare import compare_groups, diff_baseline
from tracekit.report.summary import findings_by_kind, pass_hat_k, tally_by_dimension, tally_by_run
from tracekit.results.model import parse_results


def _runs(traces: list[dict[str, Any]]) -> tuple[Any, list[Any]]:
    results = complete(traces)
    return results.summary, runs_from_results(results)


def test_pass_hat_k_is_the_unbiased_estimate() -> None:
    traces = [entry("B2-PC-01", "A", n, r) for n, r in enumerate(["pass", "pass", "fail"])]
    traces += [entry("B2-PC-02", "A", n, "pass") for n in range(3)]
    traces += [entry("B2-PC-02", "A", 9, "pending")]  # pending repeats are not judged
    summary, _ = _runs(traces)
    rows = pass_hat_k(summary)
    assert [row.k for row in rows] == [1, 2, 3]
    assert rows[0].overall == pytest.approx((2 / 3 + 1) / 2)
    assert rows[1].overall == pytest.approx((1 / 3 + 1) / 2)  # C(2,2)/C(3,2) = 1/3
    assert rows[2].overall == pytest.approx(0.5)
    assert rows[2].by_group == {"A": pytest.approx(0.5)}
    assert rows[0].tasks == 2


def test_tally_by_dimension_and_category() -> None:
    traces = [entry("B2-PC-01", "A", 0, "pass"), entry("B2-TC-01", "A", 0, "fail"),
              entry("TT-03", None, None, "acceptable"), entry(None, None, None, None)]
    summary, _ = _runs(traces)
    rows = tally_by_dimension(summary)
    assert [row.tally.label for row in rows] == ["B2", "TT"]
    assert [c.label for c in rows[0].categories] == ["PC", "TC"] and [c.label for c in rows[1].categories] == ["TT"]
    assert rows[0].tally.counts == {"pass": 1, "acceptable": 0, "fail": 1, "pending": 0}
    assert rows[0].tally.pass_rate == 0.5


def test_group_comparison_on_shared_cases() -> None:
    traces = [
        entry("B2-PC-01", "A", 0, "fail"), entry("B2-PC-01", "B", 0, "pass"),
        entry("B2-PC-02", "A", 0, "pass"), entry("B2-PC-02", "B", 0, "acceptable"),
        entry("B2-PC-03", "A", 0, "pass"), entry("B2-PC-03", "B", 0, "pass"),
        entry("B2-PC-04", "A", 0, "acceptable"), entry("B2-PC-04", "B", 0, "fail"),
        entry("B2-PC-05", "A", 0, "pass"),  # only in A: not compared
    ]
    summary, runs = _runs(traces)
    comparison = compare_groups(summary, runs)
    assert comparison is not None
    assert (comparison.a_name, comparison.b_name, comparison.shared_cases) == ("A", "B", 4)
    assert comparison.overall.pass_rate_delta == pytest.approx(0.0)  # 2/4 pass each
    # Only pass counts: acceptable -> fail is no change, pass -> acceptable is worse (the rule the JSON uses).
    assert [(c.case_id, c.better) for c in comparison.changed] == [("B2-PC-02", False), ("B2-PC-01", True)]
    assert {key: case.better for key, case in summary.ab.per_case.items()} == {
        "B2-PC-01": "B", "B2-PC-02": "A", "B2-PC-03": "tie", "B2-PC-04": "tie"}
    assert [row.label for row in comparison.dimensions] == ["B2"]
    assert compare_groups(*_runs(traces[:1])) is None


def test_baseline_diff_matches_case_group_repeat() -> None:
    before = [entry("B2-PC-01", "A", 0, "pass"), entry("B2-PC-02", "A", 0, "fail"),
              entry("B2-PC-03", "A", 0, "pass"), entry("B2-PC-09", "A", 0, "pass")]
    now = [entry("B2-PC-01", "A", 0, "fail"), entry("B2-PC-02", "A", 0, "pass"),
           entry("B2-PC-03", "A", 0, "pending"), entry("B2-PC-05", "A", 0, "pass")]
    diff = diff_baseline(_runs(now)[1], _runs(before)[1])
    assert [c.run.case_id for c in diff.regressions] == ["B2-PC-01"]
    assert [c.run.case_id for c in diff.improvements] == ["B2-PC-02"]
    assert [r.case_id for r in diff.new] == ["B2-PC-05"] and [r.case_id for r in diff.missing] == ["B2-PC-09"]
    assert diff.unchanged == 1  # pending is not a verdict change


def test_a_run_shows_the_checks_and_judge_of_its_verdict() -> None:
    checks = [{"check": "answer faithful", "result": "fail", "evidence": "claims 3 results", "expected": {"n": 0}},
              {"check": "no_tool", "result": "pass", "evidence": ""}]
    judged = [judged_check("fail", ["编造了数据"], ["共有 3 家酒店"])]
    item = entry("Q1-TF-02", "B", 1, None, verdict=verdict("Q1-TF-02", "fail", checks, judged, "fabrication"),
                 findings=[{"kind": "retry_storm", "severity": "warning", "calls": [1], "message": "x"}])
    (run,) = runs_from_results(complete([item]))
    assert (run.dimension, run.category, run.result) == ("Q1", "TF", "fail")
    assert [(c.name, c.result, c.evidence, c.expected, c.judged) for c in run.checks] == [
        ("answer faithful", "fail", "claims 3 results", '{"n":0}', False), ("no_tool", "pass", "", "", False),
        ("judge", "fail", "编造了数据", "", True)]
    assert run.judgement is not None and run.judgement.quotes == ["共有 3 家酒店"]
    assert run.judgement.reasoning == "编造了数据" and run.judgement.result == "fail"
    assert run.failure_modes == ["fabrication"] and run.attribution["failure_kind"] == "fabrication"
    assert run.findings[0].calls == [1] and run.label == "Q1-TF-02 B#1"


def test_what_is_not_a_results_json_is_refused_with_the_field() -> None:
    with pytest.raises(ResultsError, match="not JSON"):
        parse_results(b"{", "r.json")
    with pytest.raises(ResultsError, match="not a tracekit analyze JSON"):
        parse_results(b'{"summary": {}}', "r.json")
    bad = complete([entry("B2-PC-01", "A", 0, "pass")]).to_plain()
    bad["traces"][0]["verdict"]["result"] = "great"
    with pytest.raises(ResultsError, match=r"r.json: traces.0.verdict.result"):
        parse_results(orjson.dumps(bad), "r.json")


def test_findings_by_kind_counts_and_orders() -> None:
    traces = [
        entry("B2-PC-01", "A", 0, "pass", findings=[
            {"kind": "repeated_call", "severity": "warning", "calls": [1], "message": ""},
            {"kind": "repeated_call", "severity": "error", "calls": [2], "message": ""}]),
        entry("B2-PC-02", "A", 0, "pass", findings=[{"kind": "unused_output", "severity": "info", "calls": [0],
                                                     "message": ""}]),
        entry("B2-PC-03", "A", 0, "pass", findings=[{"kind": "unused_output", "severity": "info", "calls": [0],
                                                     "message": ""}]),
        entry("B2-PC-04", "A", 0, "pass", findings=[{"kind": "alternating_loop", "severity": "warning",
                                                     "calls": [0], "message": ""}]),
    ]
    groups = findings_by_kind(_runs(traces)[1])
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
            traces.append(entry(case_id, group, 0, result, run=run, trace_id=f"{case_id}-{group}@{run}"))
    traces.append(entry("B2-PC-01", "A", 1, "pass", run="run:scripted:reference", trace_id="B2-PC-01-A-1@ref"))
    return traces


def test_runs_are_never_repeats_of_each_other() -> None:
    summary, runs = _runs(_two_runs())
    rows = pass_hat_k(summary)
    # Pooled, B2-PC-01 A would be 3 repeats (pass, fail, pass) and pass^2 1/3; per run it is 1 and (flawed) n/a.
    assert [row.k for row in rows] == [1, 2]
    assert rows[1].overall == 1.0 and rows[1].tasks == 1
    assert rows[0].by_run == {"scripted:flawed": pytest.approx(1 / 3), "scripted:reference": 1.0}
    rows_by_run = {row.name: row for row in tally_by_run(summary, rows)}
    assert rows_by_run["scripted:flawed"].tally.counts == {"pass": 1, "acceptable": 0, "fail": 2, "pending": 0}
    assert rows_by_run["scripted:reference"].pass_k == {1: 1.0, 2: 1.0}
    assert runs[0].label == "B2-PC-01 A#0 · scripted:reference"
    assert tally_by_run(_runs(_two_runs()[:3])[0], rows) == []  # one run: no rows


def test_groups_are_compared_within_a_run() -> None:
    comparison = compare_groups(*_runs(_two_runs()))
    assert comparison is not None and comparison.shared_cases == 2  # B2-PC-01 in each run
    assert comparison.changed == []  # reference A pass / B pass; flawed A fail / B fail: no change in a run
    assert [(row.label, row.a.tally.counts["pass"], row.b.tally.counts["pass"]) for row in comparison.runs] == [
        ("scripted:flawed", 0, 0), ("scripted:reference", 2, 1)]


def test_baseline_matches_by_run_when_both_sides_name_runs() -> None:
    now = _runs(_two_runs())[1]
    diff = diff_baseline(now, _runs(_two_runs())[1])
    assert (diff.regressions, diff.improvements, diff.unchanged) == ([], [], len(now))
    legacy = [{**item, "run": None} for item in _two_runs() if "reference" in str(item["run"])]
    old = diff_baseline(now, _runs(legacy)[1])  # results from before runs were named
    assert (old.unchanged, old.missing) == (4, [])  # matched by case, group and repeat alone
    assert {run.run_name for run in old.new} == {"run:scripted:flawed"}


def test_markdown_junit_and_index_show_the_runs(tmp_path: Any) -> None:
    from tracekit.report import render_junit, render_markdown, write_reports

    results = complete(_two_runs())
    runs = runs_from_results(results)
    markdown = render_markdown(runs, results.summary, comparison=compare_groups(results.summary, runs),
                               pass_k=pass_hat_k(results.summary))
    assert "| `scripted:flawed` | 1 | 0 | 2 | 0 | 33% | 33% |" in markdown
    assert "- `scripted:reference`: k=1 100% · k=2 100%" in markdown
    assert 'name="B2-PC-01[A]#0 @scripted:flawed"' in render_junit(runs)
    index = write_reports(results, tmp_path / "html").html[0].read_text(encoding="utf-8")
    assert 'id="runs"' in index and "run <span class=\"mono\">scripted:reference</span>" in index


def test_category_bars_are_per_run_never_pooled(tmp_path: Any) -> None:
    """Reference (4 of 4 pass) and flawed (1 of 3 pass): pooled, the category would read 5 of 7; per run it is
    100% and 33%, each with its own bar on the index."""
    from tracekit.report import write_reports

    summary, _ = _runs(_two_runs())
    (row,) = tally_by_dimension(summary, per_run=True)
    assert row.tally.total == 7  # the summary's pooled figure stays available; the bars below are per run
    by_run = {tally.label: (tally.counts["pass"], tally.total) for tally in row.per_run["PC"]}
    assert by_run == {"scripted:flawed": (1, 3), "scripted:reference": (4, 4)}
    assert [tally.label for tally in row.per_run[""]] == ["scripted:flawed", "scripted:reference"]
    assert tally_by_dimension(summary)[0].per_run == {}  # the Markdown's table: no per-run rows
    reference_only, _ = _runs([item for item in _two_runs() if "reference" in str(item["run"])])
    assert tally_by_dimension(reference_only, per_run=True)[0].per_run == {}  # one run: nothing to tell apart
    index = write_reports(complete(_two_runs()), tmp_path / "html").html[0].read_text(encoding="utf-8")
    table = index[index.index('id="dimensions"'):index.index("</table>", index.index('id="dimensions"'))]
    assert table.count('class="bar"') == 4  # B2 and B2-PC, once per run
    assert 'style="width: 100.00%"' in table and 'style="width: 33.33%"' in table
    assert 'style="width: 71.43%"' not in table  # the pooled 5 of 7 is drawn nowhere
