"""The report read as a reviewer reads it: failures on the first screen, a session the guard stopped shown as a
stop, token counts that say "unknown" where no usage was reported, no column that is always empty."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from tracekit.analyze.results import analyze_trace
from tracekit.cases import load_cases
from tracekit.guard import GuardConfig, LiveGuard
from tracekit.report import write_reports
from tracekit.runner.harness import RunSettings
from tracekit.runner.jobs import plan_jobs, select_cases
from tracekit.runner.run import run_jobs
from tracekit.trace import AssistantMessage, Header, ModelCall, Usage, UserMessage, load_trace, write_trace

ROOT = Path(__file__).resolve().parents[2]


def _rows(index: str) -> list[str]:
    """The rows of the traces table, in order."""
    table = index[index.index('<table class="traces">'):]
    return table.split('<tr class="r-')[1:]


def _label(row: str) -> str:
    found = re.search(r'<a href="traces/[^"]+"[^>]*>([^<]+)</a>', row)
    assert found is not None, row
    return found[1]


def test_failing_traces_lead_the_table_and_a_line_says_what_failed(report_inputs: dict[str, Any],
                                                                     tmp_path: Path) -> None:
    index = write_reports(report_inputs["results"], html_dir=tmp_path / "html",
                          cases=report_inputs["cases"]).html[0].read_text(encoding="utf-8")
    order = [_label(row) for row in _rows(index)]
    # fail, then pending, acceptable, pass (by case id, group, repeat), then the trace bound to no case
    assert order == ["B2-PC-02 A#1", "C4-LD-01 B#0", "C4-LD-01 A#0", "B2-PC-02 A#0", "B2-PC-02 B#0",
                     "B2-PC-02 B#1", "t-free"]
    headline = index[index.index('<p class="headline fail"'):]
    headline = headline[: headline.index("</p>")]
    assert "1 failing" in headline and "1 pending" in headline and "of 7 traces" in headline
    assert 'href="traces/B2-PC-02.A.1.html"' in headline
    assert index.index('class="headline fail"') < index.index('<table')  # before every table


def test_a_report_without_failures_says_so(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    results = copy.deepcopy(report_inputs["results"])
    for entry in results["traces"]:
        if entry["verdict"] is not None:
            entry["verdict"]["result"] = "pass"
    index = write_reports(results, html_dir=tmp_path / "html").html[0].read_text(encoding="utf-8")
    assert 'class="headline ok"' in index and "Nothing failed" in index


def test_the_outcome_column_is_shown_only_when_an_importer_kept_an_outcome(report_inputs: dict[str, Any],
                                                                             tmp_path: Path) -> None:
    """Its source is the trace's meta (tau-bench ``reward``...): recorded traces have none, so no column of
    dashes; an imported trace's outcome brings it back (test_html covers the value)."""
    index = write_reports(report_inputs["results"], html_dir=tmp_path / "a").html[0].read_text(encoding="utf-8")
    assert "<th>outcome</th>" not in index
    results = copy.deepcopy(report_inputs["results"])
    results["traces"][-1]["meta"] = {"task_id": 7, "trial": 1, "reward": 1.0}
    index = write_reports(results, html_dir=tmp_path / "b").html[0].read_text(encoding="utf-8")
    assert "<th>outcome</th>" in index and "reward 1.0" in index


def _usage_trace(path: Path, trace_id: str, usage: Usage) -> Path:
    """A one-turn trace whose model call carried ``usage`` (``Usage()``: a stream with no usage event)."""
    return write_trace(path, [
        Header(trace_id=trace_id, case_id="B2-PC-02", group="A", repeat=0, provider="anthropic", model="m",
               source="test:fixture"),
        UserMessage(message_index=0, content="你好", t=1.0),
        ModelCall(index=0, provider="anthropic", model="m", status=200, latency_ms=10.0, usage=usage,
                  stop_reason="end_turn", t=1.0),
        AssistantMessage(message_index=1, content=[{"type": "text", "text": "你好！"}], stop_reason="end_turn",
                         model_call=0, t=1.0),
    ])


@pytest.mark.parametrize(("usage", "shown"), [(Usage(), "unknown"), (Usage(input_tokens=0, output_tokens=0), "0")])
def test_tokens_are_unknown_everywhere_the_usage_was_absent_and_0_only_when_reported(
    tmp_path: Path, usage: Usage, shown: str
) -> None:
    path = _usage_trace(tmp_path / "t.jsonl", "t-usage", usage)
    entry = analyze_trace(load_trace(path)).to_plain()
    entry["trace_file"] = "t.jsonl"
    results = {"tracekit": "0.1.0", "traces": [entry]}
    pages = write_reports(results, html_dir=tmp_path / "html", results_dir=tmp_path).html
    index = pages[0].read_text(encoding="utf-8")
    (row,) = _rows(index)
    tokens_cell = re.findall(r'<td class="num">(.*?)</td>', row)[-1]
    (trace_page,) = [page for page in pages if "/traces/" in page.as_posix()]
    page = trace_page.read_text(encoding="utf-8")
    dl_tokens = re.search(r"<dt>tokens</dt><dd>(.*?)</dd>", page)
    model_line = re.search(r'<div class="ev model">(.*?)\n', page)
    assert dl_tokens is not None and model_line is not None
    if shown == "unknown":
        assert ">unknown</span>" in tokens_cell
        assert ">unknown</span>" in dl_tokens[1] and " in · " not in dl_tokens[1]
        assert ">unknown</span>" in model_line[1] and " in / " not in model_line[1]
    else:
        assert tokens_cell == "0"
        assert dl_tokens[1] == "0 in · 0 out"
        assert "0 in / 0 out" in model_line[1]


def test_a_session_the_guard_stopped_is_a_stop_on_its_page_and_on_the_index(tmp_path: Path) -> None:
    """The demo's flawed policy loops on C4-LD-01 through a proxy with a live guard set to stop retry storms
    (as ``tracekit record --guard`` runs it); the trace it leaves, analyzed and reported."""
    library = load_cases(ROOT / "cases")
    (job,) = plan_jobs(select_cases(library, ["C4-LD-01"]), ["A"], 1)
    config = GuardConfig.model_validate({"findings": {"retry_storm": {"action": "stop"}},
                                         "detectors": {"retry_storm": {"failures": 4}}})  # fmt: skip
    run_jobs([job], RunSettings(library=library, out_dir=tmp_path / "runs", model="scripted:flawed",
                                observer=LiveGuard(config)), concurrency=1)  # fmt: skip
    path = tmp_path / "runs" / f"{job.name}.jsonl"
    entry = analyze_trace(load_trace(path)).to_plain()
    entry["trace_file"] = path.name
    other = copy.deepcopy(entry)
    other.update(trace_id="t-other", guard=[])  # the same session without the stop, to sort against
    results = {"tracekit": "0.1.0", "traces": [other, entry]}
    pages = write_reports(results, html_dir=tmp_path / "html", results_dir=path.parent).html
    index = pages[0].read_text(encoding="utf-8")
    headline = index[index.index('class="headline fail"'):]
    assert "1 stopped by the guard" in headline[: headline.index("</p>")]
    first = _rows(index)[0]
    assert 'class="badge v-stop"' in first and "stopped · retry_storm" in first
    assert "stopped by the guard (retry_storm)" in first  # the why
    link = re.search(r'<a href="(traces/[^"]+)"', first)
    assert link is not None
    page = (tmp_path / "html" / link[1]).read_text(encoding="utf-8")
    assert '<p class="stopped" id="guard-stop"><strong>Stopped by the guard</strong>' in page
    assert '<div class="ev stop"><div class="who">guard · stop · retry_storm' in page
    assert page.index('id="guard-stop"') < page.index('id="findings"')  # above the findings' warnings
