"""The Markdown summary fits a pull-request comment and cannot be turned into markup by trace content."""

from __future__ import annotations

import copy
import re
from typing import Any

from report_support import complete

from tracekit.report import render_markdown, runs_from_results
from tracekit.report.compare import compare_groups, diff_baseline
from tracekit.report.markdown import MAX_LINES
from tracekit.report.summary import pass_hat_k


def _big_results(report_inputs: dict[str, Any], count: int, result: str) -> dict[str, Any]:
    results = copy.deepcopy(report_inputs["results"])
    template = results["traces"][1]  # B2-PC-02 A#1, failing, with checks and findings
    traces = []
    for n in range(count):
        for group in ("A", "B"):
            entry = copy.deepcopy(template)
            entry.update(trace_id=f"t{n}{group}", case_id=f"B2-TC-{n % 99 + 1:02d}", group=group, repeat=n // 99)
            entry["verdict"]["result"] = result if group == "B" else "pass"
            entry["findings"] = [dict(entry["findings"][0], kind=f"kind_{n % 12}")]
            traces.append(entry)
    results["traces"] = traces
    return results


def test_markdown_stays_short_for_a_large_run(report_inputs: dict[str, Any]) -> None:
    results = complete(_big_results(report_inputs, 300, "fail"))
    runs = runs_from_results(results)
    baseline = runs_from_results(complete(_big_results(report_inputs, 300, "pass")))
    text = render_markdown(runs, results.summary, comparison=compare_groups(results.summary, runs),
                           baseline=diff_baseline(runs, baseline), pass_k=pass_hat_k(results.summary),
                           html_index="reports/html/index.html")
    lines = text.splitlines()
    assert len(lines) <= MAX_LINES
    assert "**Against the baseline:** 300 regressions" in text
    assert "- … and 292 more" in text  # 8 regressions listed
    assert "Group A → B" in text and "pass rate (pass only) 100% → 0%" in text
    assert "**Failing (300):**" in text
    assert "… 4 more kinds" in text
    assert text.endswith("Full report: `reports/html/index.html`\n")


def test_markdown_escapes_trace_content(report_inputs: dict[str, Any]) -> None:
    results = copy.deepcopy(report_inputs["results"])
    results["traces"][1]["verdict"]["checks"][1]["check"] = "<img src=x onerror=alert(1)> [x](javascript:alert(2))"
    results["traces"][1]["case_id"] = "B2-PC-02`<b>"
    document = complete(results)
    text = render_markdown(runs_from_results(document), document.summary)
    outside_code = re.sub(r"`[^`\n]*`", "", text)
    assert "<" not in outside_code and "](" not in outside_code
    assert "`<img src=x onerror=alert(1)> [x](javascript:alert(2))`" in text  # a code span: shown, not rendered
    assert "`B2-PC-02'<b> A#1`" in text  # inside a code span, the backtick cannot close it


def test_markdown_of_the_fixture(report_inputs: dict[str, Any]) -> None:
    results = complete(report_inputs["results"])
    runs = runs_from_results(results)
    text = render_markdown(runs, results.summary, comparison=compare_groups(results.summary, runs),
                           pass_k=pass_hat_k(results.summary))
    assert "### tracekit: 7 traces, 6 verdicts" in text
    assert "✅ pass **3** · 🟡 acceptable **1** · ❌ fail **1** · ⏳ pending **1** · pass rate 60%" in text
    assert "| B2 | 3 | 0 | 1 | 0 | 75% |" in text
    assert "- `B2-PC-02 A#1` fail: `数据流 city_id`" in text
    acceptable = render_markdown(runs, results.summary, fail_on="acceptable")
    assert "**Failing (2):**" in acceptable
