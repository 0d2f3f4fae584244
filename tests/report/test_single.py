"""The single-file HTML report (``--html-single``): one file, nothing outside it, the failing traces' pages
inside and linked, hostile content inert, the same bytes every time, bounded on large runs.

Inputs: the report fixtures (``conftest.py``: seven traces written by hand with the trace writer, one
failing with a hostile tool result and findings, Chinese text); the CLI test analyzes the bundled
``recordings/`` (scripted runs, ``recordings/README.md``).
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from report_support import parse_page

from tracekit.cli.main import cli
from tracekit.report import write_reports

ROOT = Path(__file__).resolve().parents[2]
HOSTILE_SCRIPT = "<script>alert(1)</script>"


def _single(inputs: dict[str, Any], path: Path, results: dict[str, Any] | None = None) -> Any:
    return write_reports(results or inputs["results"], html_single=path, cases=inputs["cases"],
                         results_dir=inputs["root"]).single  # fmt: skip


def _failing_copies(inputs: dict[str, Any], count: int) -> dict[str, Any]:
    """The fixture's results with ``count`` failing traces (copies of the failing one, other repeats)."""
    results = copy.deepcopy(inputs["results"])
    failing = next(item for item in results["traces"] if item["trace_id"] == "t-pc02-a1")
    for repeat in range(2, count + 1):
        extra = copy.deepcopy(failing)
        extra["trace_id"], extra["repeat"] = f"t-pc02-a{repeat}", repeat
        results["traces"].append(extra)
    return results


def test_one_file_with_nothing_outside_it(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "review"
    single = _single(report_inputs, out / "run.html")
    assert sorted(p.name for p in out.iterdir()) == ["run.html"]  # one file, no temporary left beside it
    raw = single.path.read_text(encoding="utf-8")
    assert raw.startswith("<!DOCTYPE html>") and "default-src 'none'" in raw
    page = parse_page(single.path)
    for tag, attributes in page.tags:
        assert tag not in ("script", "iframe", "object", "embed", "link", "base", "form"), tag
        for name in ("href", "src"):
            value = attributes.get(name)
            if value is not None:  # an anchor in this file, or an image inline; never a file, a URL, a page
                assert value.startswith("#") or value.startswith("data:image/"), (tag, value)
    assert "@import" not in raw and re.search(r"url\((?!#)", raw) is None
    ids = page.ids()
    assert [name for name, seen in Counter(ids).items() if seen > 1] == []  # several traces, ids apart
    assert all(link[1:] in set(ids) for link in page.links())  # every link lands in the file


def test_failing_pages_are_inside_and_linked_from_the_table(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    single = _single(report_inputs, tmp_path / "run.html")
    assert [run.trace_id for run in single.embedded] == ["t-pc02-a1"] and single.left_out == []
    page = parse_page(single.path)
    ids = set(page.ids())
    anchor = "trace-B2-PC-02.A.1"
    assert anchor in ids and "row-B2-PC-02.A.1" in ids
    rows = [attrs for tag, attrs in page.tags if tag == "tr" and str(attrs.get("id", "")).startswith("row-")]
    assert len(rows) == 7 and rows[0]["id"] == "row-B2-PC-02.A.1"  # every trace a row, failures first
    assert page.links().count(f"#{anchor}") >= 2  # its row and the headline open its page
    raw = single.path.read_text(encoding="utf-8")
    section = raw[raw.index(f'id="{anchor}"'):]
    assert 'id="t1-call-1"' in section and 'href="#t1-call-1"' in section  # findings and graph stay inside it
    assert 'id="t1-arrow-next"' in section and "url(#t1-arrow-next)" in section
    assert "Failing traces, in full" in raw and "could not be read" not in raw  # the trace file's own page
    for passing in ("trace-B2-PC-02.A.0", "trace-C4-LD-01.A.0"):  # rows only, with their file to read them
        assert passing not in ids
    tooltips = [attrs.get("title") or "" for tag, attrs in page.tags if tag == "td"]
    assert any(title.startswith("B2-PC-02 A#0") and "t-pc02-a0.jsonl" in title for title in tooltips), tooltips
    assert "Passing traces are rows only" in "".join(page.text)


def test_hostile_content_is_text(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    single = _single(report_inputs, tmp_path / "run.html")
    raw = single.path.read_text(encoding="utf-8")
    assert HOSTILE_SCRIPT not in raw and "&lt;script&gt;alert(1)&lt;/script&gt;" in raw
    page = parse_page(single.path)
    assert HOSTILE_SCRIPT in "".join(page.text)
    for _tag, attributes in page.tags:
        assert not any(name.startswith("on") for name in attributes)
        assert not str(attributes.get("href") or "").lower().startswith("javascript:")


def test_same_bytes_and_chinese_kept(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    one = _single(report_inputs, tmp_path / "one.html").path.read_bytes()
    two = _single(report_inputs, tmp_path / "two.html").path.read_bytes()
    assert one == two
    text = one.decode("utf-8")
    assert "帮我查一下北京朝阳区的二手房" in text and "\\u" not in text
    assert '<span lang="zh-CN">二手房查询：城市编号来自上一步</span>' in text  # the case's title on the failing page


def test_the_folder_report_and_the_single_file_agree(report_inputs: dict[str, Any], tmp_path: Path) -> None:
    """Written together, the folder's bytes are those it has alone, and the file those it has alone."""
    both = write_reports(report_inputs["results"], html_dir=tmp_path / "both", html_single=tmp_path / "both.html",
                         cases=report_inputs["cases"], results_dir=report_inputs["root"])  # fmt: skip
    alone = write_reports(report_inputs["results"], html_dir=tmp_path / "alone", cases=report_inputs["cases"],
                          results_dir=report_inputs["root"])  # fmt: skip
    assert [p.read_bytes() for p in both.html] == [p.read_bytes() for p in alone.html]
    assert (tmp_path / "both.html").read_bytes() == _single(report_inputs, tmp_path / "one.html").path.read_bytes()


def test_embedded_pages_are_capped_with_a_note(report_inputs: dict[str, Any], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    import tracekit.report.single as single_module

    monkeypatch.setattr(single_module, "EMBED_PAGES", 2)
    single = _single(report_inputs, tmp_path / "run.html", _failing_copies(report_inputs, 5))
    assert [run.trace_id for run in single.embedded] == ["t-pc02-a1", "t-pc02-a2"]
    assert [run.trace_id for run in single.left_out] == ["t-pc02-a3", "t-pc02-a4", "t-pc02-a5"]
    page = parse_page(single.path)
    text = " ".join("".join(page.text).split())
    assert "The pages of 3 more failing traces are left out to keep the file attachable (at most 2 pages" in text
    assert "--html DIR" in text
    ids = set(page.ids())
    assert {"trace-B2-PC-02.A.1", "trace-B2-PC-02.A.2"} <= ids and "trace-B2-PC-02.A.3" not in ids
    assert "#row-B2-PC-02.A.3" in page.links()  # the headline still leads to a left-out trace's row
    assert all(link[1:] in ids for link in page.links()) and len(ids) == len(page.ids())  # two pages, ids apart
    assert "more left out" in single.summary_line()


def test_a_page_too_big_for_the_budget_is_left_out(report_inputs: dict[str, Any], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    import tracekit.report.single as single_module

    results = _failing_copies(report_inputs, 2)
    first = _single(report_inputs, tmp_path / "all.html", results)
    assert len(first.embedded) == 2
    monkeypatch.setattr(single_module, "_SLACK", 0)
    monkeypatch.setattr(single_module, "FILE_BYTES", first.path.stat().st_size - 1000)  # room for one page
    single = _single(report_inputs, tmp_path / "run.html", results)
    assert len(single.embedded) == 1 and len(single.left_out) == 1
    assert single.path.stat().st_size < first.path.stat().st_size


def test_cli_analyze_and_report_write_the_single_file(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["analyze", str(ROOT / "recordings" / "flawed"), "--cases", str(ROOT / "cases"),
                                 "--json", str(tmp_path / "results.json"), "--html-single",
                                 str(tmp_path / "analyze.html")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "analyze.html (" in result.output and "failing traces' pages inside" in result.output
    result = runner.invoke(cli, ["report", str(tmp_path / "results.json"), "--html-single",
                                 str(tmp_path / "report.html"), "--cases", str(ROOT / "cases")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "analyze.html").read_bytes() == (tmp_path / "report.html").read_bytes()
    page = parse_page(tmp_path / "report.html")
    assert sum(1 for name in page.ids() if name.startswith("trace-")) >= 10  # the flawed run's failures, inside
    (tmp_path / "a-folder.html").mkdir()
    refused = runner.invoke(cli, ["report", str(tmp_path / "results.json"), "--html-single",
                                  str(tmp_path / "a-folder.html")])  # fmt: skip
    assert refused.exit_code == 2 and "is a folder" in refused.output
