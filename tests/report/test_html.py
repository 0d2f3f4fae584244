"""The HTML report: deterministic bytes, escaping of hostile content, self-containment, pagination, links."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape
from report_support import parse_page

from tracekit.output import write_json
from tracekit.report import write_reports
from tracekit.report.html import PAGE_SIZE


def _write(inputs: dict[str, Any], out: Path, **options: Any) -> list[Path]:
    return write_reports(inputs["results"], html_dir=out, cases=inputs["cases"], **options).html


def test_same_input_gives_same_bytes(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    first = _write(report_inputs, tmp_path / "one", baseline=copy.deepcopy(report_inputs["results"]))
    second = _write(report_inputs, tmp_path / "two", baseline=copy.deepcopy(report_inputs["results"]))
    names_one = [p.relative_to(tmp_path / "one") for p in first]
    names_two = [p.relative_to(tmp_path / "two") for p in second]
    assert names_one == names_two
    assert len(names_one) >= 10  # index, 2 case pages, 7 trace pages, kind pages
    for one, two in zip(first, second, strict=True):
        assert one.read_bytes() == two.read_bytes(), one


def test_hostile_tool_result_is_text_not_markup(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    pages = _write(report_inputs, tmp_path / "html")
    hostile_page = tmp_path / "html" / "traces" / "B2-PC-02.A.1.html"
    assert hostile_page in pages
    raw = hostile_page.read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in raw
    page = parse_page(hostile_page)
    assert "<script>alert(1)</script>" in "".join(page.text), "the hostile text is shown as text"
    for path in pages:
        for tag, attributes in parse_page(path).tags:
            assert tag not in ("script", "iframe", "object", "embed", "link", "base", "form"), (path, tag)
            for name, value in attributes.items():
                assert not name.startswith("on"), (path, tag, name)
                if name in ("href", "src"):
                    assert value is not None
                    assert not value.lower().startswith("javascript:"), (path, value)


def test_pages_are_self_contained(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    pages = _write(report_inputs, tmp_path / "html")
    for path in pages:
        raw = path.read_text(encoding="utf-8")
        assert raw.startswith("<!DOCTYPE html>")
        assert '<meta charset="utf-8">' in raw
        assert "default-src 'none'" in raw  # the CSP forbids scripts and requests even if markup slipped in
        for tag, attributes in parse_page(path).tags:
            for name in ("href", "src"):
                value = attributes.get(name)
                if value is None:
                    continue
                assert "//" not in value and not value.startswith(("http:", "https:", "data:text")), (path, value)
                if tag == "img":
                    assert value.startswith("data:image/"), (path, value)
        assert "@import" not in raw
        assert re.search(r"url\((?!#)", raw) is None  # only fragment references (SVG markers)


def test_internal_links_resolve(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    pages = _write(report_inputs, tmp_path / "html")
    anchors: dict[Path, set[str]] = {}
    for path in pages:
        anchors[path.resolve()] = {a["id"] for _, a in parse_page(path).tags if a.get("id")}
    checked = 0
    for path in pages:
        for tag, attributes in parse_page(path).tags:
            href = attributes.get("href")
            if tag != "a" or not href:
                continue
            target, _, fragment = href.partition("#")
            resolved = (path.parent / target).resolve() if target else path.resolve()
            assert resolved in anchors, (path, href)
            if fragment:
                assert fragment in anchors[resolved], (path, href)
            checked += 1
    assert checked > 50


def test_chinese_is_kept_and_marked(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    _write(report_inputs, tmp_path / "html")
    case_page = (tmp_path / "html" / "cases" / "B2-PC-02.html").read_text(encoding="utf-8")
    assert "二手房查询：城市编号来自上一步" in case_page
    assert '<span lang="zh-CN">二手房查询：城市编号来自上一步</span>' in case_page
    assert "\\u" not in case_page
    trace_page = (tmp_path / "html" / "traces" / "B2-PC-02.A.0.html").read_text(encoding="utf-8")
    assert '"city": "北京"' in trace_page.replace("&#34;", '"')
    assert "Noto Sans CJK SC" in trace_page


def test_case_page_shows_expectation_beside_checks_and_judge(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    _write(report_inputs, tmp_path / "html")
    text = "".join(parse_page(tmp_path / "html" / "cases" / "B2-PC-02.html").text)
    assert "What the seed expects" in text and "What the agent did" in text
    assert "先调用 beike_lookup_city_id" in text  # expected behaviour, verbatim
    assert "数据流 city_id" in text  # a check, with its evidence below
    assert "city_id 110000 from call #0" in text
    assert "回答忠实于工具结果。" in text and "“朝阳区有一套 520 万的二手房。”" in text  # judge and quote
    assert "抱歉，房源服务暂时不可用。" in text  # the failing run's final answer
    assert "2.4 s over 3 model calls" in text  # latency from the trace's model calls
    unknown = "".join(parse_page(tmp_path / "html" / "cases" / "C4-LD-01.html").text)
    assert "The case definition was not given" in unknown


def test_trace_page_marks_injection_findings_and_graph(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    _write(report_inputs, tmp_path / "html")
    path = tmp_path / "html" / "traces" / "B2-PC-02.A.1.html"
    page = parse_page(path)
    call = next(attrs for tag, attrs in page.tags if attrs.get("id") == "call-1")
    assert "flag-warning" in (call.get("class") or "") and "is-error" in (call.get("class") or "")
    text = "".join(page.text)
    assert "injected by tool_intercept on beike_search_resale_housing" in text
    assert "what the tool returned before the intercept" in text
    svg_tags = [(tag, attrs) for tag, attrs in page.tags if tag in ("svg", "path", "a")]
    assert any(tag == "svg" for tag, _ in svg_tags)
    assert any("e-data" in (attrs.get("class") or "") for tag, attrs in svg_tags if tag == "path")
    assert any("e-next" in (attrs.get("class") or "") for tag, attrs in svg_tags if tag == "path")
    assert "city_id → city_id" in text  # the data edge's key paths


def test_long_results_are_folded(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    results = copy.deepcopy(report_inputs["results"])
    long_text = "很长的结果 " * 400
    results["traces"][0]["verdict"]["checks"][0]["evidence"] = long_text
    write_reports(results, html_dir=tmp_path / "html")
    raw = (tmp_path / "html" / "traces" / "B2-PC-02.A.0.html").read_text(encoding="utf-8")
    start = raw.index("很长的结果")
    assert raw.rfind("<details", 0, start) > raw.rfind("</details>", 0, start)


def test_index_is_paginated(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    results = copy.deepcopy(report_inputs["results"])
    template = results["traces"][-1]
    results["traces"] = [dict(template, trace_id=f"extra-{n:03d}", source=None) for n in range(25)]
    pages = write_reports(results, html_dir=tmp_path / "html", page_size=10).html
    names = {p.name for p in pages}
    assert {"index.html", "runs-2.html", "runs-3.html"} <= names and "runs-4.html" not in names
    last_page = parse_page(tmp_path / "html" / "runs-3.html")
    rows = [a for tag, a in last_page.tags if tag == "a" and "traces/" in (a.get("href") or "")]
    assert len(rows) == 5
    assert PAGE_SIZE == 200


def test_baseline_regressions_lead_the_index(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    """The baseline is judged by ``tracekit diff``'s engine: a task's repeats together, so B2-PC-02 A (pass, pass
    before; pass, fail now) is flaky, not a regression."""
    baseline = copy.deepcopy(report_inputs["results"])
    for entry in baseline["traces"]:
        if entry["trace_id"] == "t-pc02-a1":
            entry["verdict"]["result"] = "pass"  # both repeats passed: now they disagree (flaky)
        if entry["trace_id"] == "t-ld01-a0":
            entry["verdict"]["result"] = "pass"  # was passing: now acceptable, a regression
        if entry["trace_id"] in ("t-pc02-b0", "t-pc02-b1"):
            entry["verdict"]["result"] = "fail"  # both failed: now both pass, an improvement
    write_reports(report_inputs["results"], html_dir=tmp_path / "html", baseline=baseline)
    text = "".join(parse_page(tmp_path / "html" / "index.html").text)
    assert "1 regressions, 2 improvements, 2 flaky" in text
    assert text.index("Regressions") < text.index("Improvements") < text.index("Flaky (repeats disagree)")
    assert text.index("Flaky (repeats disagree)") < text.index("Verdicts by dimension")


def test_missing_trace_file_still_gets_a_page(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    results = copy.deepcopy(report_inputs["results"])
    results["traces"][0].update(source=str(tmp_path / "gone.jsonl"), trace_file=None)
    write_reports(results, html_dir=tmp_path / "html")
    text = "".join(parse_page(tmp_path / "html" / "traces" / "B2-PC-02.A.0.html").text)
    assert "The trace file could not be read" in text
    assert "beike_lookup_city_id" in text  # from the results' tool_calls


@pytest.mark.parametrize("trace_id", ["../../escape", "a/b\\c", "CON", "名字"])
def test_page_names_stay_inside_the_report(report_inputs: dict[str, Any], tmp_path: Path, trace_id: str) -> None:
    results = copy.deepcopy(report_inputs["results"])
    results["traces"] = [dict(results["traces"][-1], trace_id=trace_id)]
    pages = write_reports(results, html_dir=tmp_path / "html").html
    root = (tmp_path / "html").resolve()
    assert all(root in page.resolve().parents for page in pages)
    assert len(pages) == 2


def test_same_bytes_across_processes(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    """Another interpreter with another hash seed writes the same bytes (no set or dict-order luck)."""
    results = write_json(tmp_path / "results.json", report_inputs["results"])
    cases = write_json(tmp_path / "cases.json", report_inputs["cases"])
    write_reports(results, html_dir=tmp_path / "here", cases=report_inputs["cases"])
    script = (
        "import sys, orjson; from tracekit.report import write_reports; "
        "write_reports(sys.argv[1], html_dir=sys.argv[3], cases=orjson.loads(open(sys.argv[2], 'rb').read()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", script, str(results), str(cases), str(tmp_path / "there")],
                   check=True, env=env, cwd=tmp_path)
    here = sorted(p.relative_to(tmp_path / "here") for p in (tmp_path / "here").rglob("*.html"))
    there = sorted(p.relative_to(tmp_path / "there") for p in (tmp_path / "there").rglob("*.html"))
    assert here == there and len(here) > 10
    for name in here:
        assert (tmp_path / "here" / name).read_bytes() == (tmp_path / "there" / name).read_bytes(), name


def test_images_inline_only_as_data(tmp_path: Path) -> None:
    """A base64 image in the conversation is shown from a data: URI; an image by URL is named, never loaded."""
    from tracekit.analyze.results import analyze_trace
    from tracekit.trace import Header, UserMessage, load_trace, write_trace

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    path = write_trace(tmp_path / "img.jsonl", [
        Header(trace_id="img"),
        UserMessage(message_index=0, content=[
            {"type": "text", "text": "这张价签多少钱？"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/tag.png"}},
            {"type": "image", "source": {"type": "base64", "media_type": "text/html", "data": "PHNjcmlwdD4="}},
        ]),
    ])
    results = {"tracekit": "0", "traces": [analyze_trace(load_trace(path)).to_plain()]}
    write_reports(results, html_dir=tmp_path / "html")
    page = parse_page(tmp_path / "html" / "traces" / "img.html")
    sources = [attrs.get("src") for tag, attrs in page.tags if tag == "img"]
    assert sources == [f"data:image/png;base64,{png}"]
    text = "".join(page.text)
    assert "image not embedded: https://example.com/tag.png" in text
    assert "image not embedded: text/html" in text


def test_traces_table_says_why_a_trace_failed(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    written = _write(report_inputs, tmp_path / "why")
    index = written[0].read_text(encoding="utf-8")
    assert "<th>why</th>" in index
    # the failing B2-PC-02 repeat: its first failing check, with the evidence, in the row
    row = next(line for line in index.split('<tr class="r-')[1:] if "B2-PC-02 A#1" in line and "v-fail" in line)
    assert "数据流 city_id" in row


def test_ids_sort_naturally() -> None:
    from tracekit.report.run_order import natural_key

    assert sorted(["task10", "task2", "task1"], key=natural_key) == ["task1", "task2", "task10"]


def test_finding_kind_pages_list_each_findings_message(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    written = _write(report_inputs, tmp_path / "kinds")
    pages = [path for path in written if path.parent.name == "kinds" and path.name.startswith("finding-")]
    assert pages
    results = report_inputs["results"]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "Each finding" in text
        kind = next(f["kind"] for trace in results["traces"] for f in trace["findings"]
                    if f"Finding: {f['kind']}<" in text)  # fmt: skip
        messages = [f["message"] for trace in results["traces"] for f in trace["findings"] if f["kind"] == kind]
        assert all(str(escape(message)) in text for message in messages)


def test_a_good_grade_beside_a_failing_verdict_says_why(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    results = copy.deepcopy(report_inputs["results"])
    failing = next(trace for trace in results["traces"] if (trace.get("verdict") or {}).get("result") == "fail")
    assert failing["verdict"]["scores"]["tool_use"]["total"] >= 80  # e.g. B2-FR-01: 80 优秀, verdict fail
    written = _write({**report_inputs, "results": results}, tmp_path / "grade")
    pages = [p.read_text(encoding="utf-8") for p in written if p.parent.name == "traces"]
    notes = [page for page in pages if 'id="grade-note"' in page]
    assert len(notes) == 1 and "but verdict fail" in notes[0] and "数据流 city_id" in notes[0]


def test_imported_traces_show_their_own_outcome(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    results = copy.deepcopy(report_inputs["results"])
    unbound = next(trace for trace in results["traces"] if trace["case_id"] is None)
    unbound["meta"] = {"task_id": 7, "trial": 1, "reward": 0.0}  # as tracekit import tau-bench keeps it
    index = _write({**report_inputs, "results": results}, tmp_path / "outcome")[0].read_text(encoding="utf-8")
    assert "<th>outcome</th>" in index
    row = next(line for line in index.split("<tr") if unbound["trace_id"] in line)
    assert "reward 0.0" in row


def test_an_importers_outcome_is_a_filter_with_its_own_list_page(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    results = copy.deepcopy(report_inputs["results"])
    unbound = next(trace for trace in results["traces"] if trace["case_id"] is None)
    unbound["meta"] = {"task_id": 7, "trial": 1, "reward": 0.0}
    pages = _write({**report_inputs, "results": results}, tmp_path / "outcome")
    index = pages[0].read_text(encoding="utf-8")
    (listed,) = [page for page in pages if page.name.startswith("outcome-")]
    assert f'href="kinds/{listed.name}"' in index and 'id="outcomes"' in index
    text = " ".join(parse_page(listed).text)
    assert "Outcome: reward 0.0" in text and unbound["trace_id"] in text
    assert not any(page.name.startswith("outcome-") for page in _write(report_inputs, tmp_path / "none"))
