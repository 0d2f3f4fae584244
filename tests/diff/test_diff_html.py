"""The HTML diff on hand-made pairs: an index with the counts and a table per change (unchanged folded), a
page per changed pair with both call sequences side by side and the argument difference under a changed
call; escaped, self-contained, the same bytes twice."""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_diff import BOOK, LOOKUP, SEARCH, _results, _trace

from tracekit.diff import diff_results
from tracekit.report.diff_html import write_diff_html

HOSTILE = ("book", {"id": "<script>alert(1)</script>"})
CANCEL = ("cancel", {"id": "L-0"})


class _Page(HTMLParser):
    """Text, links and tags of a page."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.text: list[str] = []
        self.links: list[str] = []
        self.tags: list[str] = []
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.links += [value or "" for name, value in attrs if name == "href"]

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def words(self) -> str:
        return " ".join(" ".join(self.text).split())


def _diff() -> Any:
    base = _results(_trace("B2-PC-02", "pass", [LOOKUP, SEARCH, BOOK, CANCEL]), _trace("B2-PC-03", "fail", [LOOKUP]),
                    _trace("B2-PC-04", "pass", [LOOKUP]), _trace("B2-PC-05", "pass", [SEARCH]))
    new = _results(_trace("B2-PC-02", "fail", [SEARCH, LOOKUP, HOSTILE], findings=("order_violation",)),
                   _trace("B2-PC-03", "pass", [LOOKUP, BOOK]), _trace("B2-PC-04", "pass", [LOOKUP]),
                   _trace("TT-01", "pass", []))
    return diff_results(base, new)


def test_index_counts_every_change_and_links_a_page_per_changed_pair(tmp_path: Path) -> None:
    diff = _diff()
    pages = write_diff_html(tmp_path / "diff", diff, base_name="old.json", new_name="new.json")
    index = _Page(pages.index)
    assert diff.counts == {"regression": 1, "improvement": 1, "flaky": 0, "added": 1, "removed": 1, "unchanged": 1}
    words, html = index.words, pages.index.read_text(encoding="utf-8")
    assert "1 ▼ regression 1 ▲ improvement 0 ≈ flaky 1 + added 1 − removed 1 = unchanged" in words  # the counts
    sections = [html.index(f'<h2 id="{change}">') for change in ("regression", "improvement", "added", "removed",
                                                                  "unchanged")]  # fmt: skip
    assert sections == sorted(sections) and '<h2 id="flaky">' not in html  # regressions first; empty: no table
    pair_links = sorted(link for link in index.links if link.startswith("pairs/"))
    assert pair_links == sorted(page for page in pages.pages.values()) and len(pair_links) == 4
    assert pages.page_of(next(pair for pair in diff.pairs if pair.change == "unchanged")) is None
    assert "details" in index.tags and "B2-PC-04 A#0" in words  # unchanged: listed, folded, no page
    assert len(pages.files) == 5 and all((tmp_path / "diff" / link).is_file() for link in pair_links)
    assert "+order_violation" in words and "−1 ⇄1 ~1" in words  # B2-PC-02's calls: moved, removed, changed


def test_a_pair_page_aligns_the_calls_side_by_side_and_escapes_their_arguments(tmp_path: Path) -> None:
    diff = _diff()
    pages = write_diff_html(tmp_path / "diff", diff, base_name="old.json", new_name="new.json")
    regression = diff.pairs[0]
    path = tmp_path / "diff" / str(pages.page_of(regression))
    page = _Page(path)
    html = path.read_text(encoding="utf-8")
    assert [row.op for row in regression.calls] == ["same", "moved", "changed", "removed"]
    rows = html.count('<tr class="op-')
    assert rows == 5  # four aligned calls and the argument difference under the changed one
    assert html.count('class="op-moved"') == 1 and html.count('class="op-removed"') == 1
    assert 'id: "L-1" → "<script>alert(1)</script>"' in page.words  # the changed field, as text
    assert "values_changed" not in page.words and "root[" not in page.words  # no raw deepdiff dump
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "script" not in page.tags
    assert "pass → fail" not in page.words  # verdicts are shown as badges per side
    assert page.words.count("fail") >= 1 and "appeared: order_violation" in page.words
    assert "tool_use.total" in page.words and "100.0" in page.words and "40.0" in page.words
    assert "../index.html#regression" in page.links
    again = write_diff_html(tmp_path / "again", diff, base_name="old.json", new_name="new.json")
    assert [p.read_bytes() for p in again.files] == [p.read_bytes() for p in pages.files]


def test_hostile_failed_checks_and_trace_file_names_stay_text(tmp_path: Path) -> None:
    old, new = _trace("B2-PC-02", "pass", [LOOKUP]), _trace("B2-PC-02", "fail", [LOOKUP])
    new["verdict"]["checks"] = [
        {"check": "calls[0]:<img src=x onerror=alert(1)>", "result": "fail",
         "evidence": "<script>alert(2)</script> 北京"},
        {"check": "forbidden_tools", "result": "pass", "evidence": "none called"},
    ]
    old["trace_file"], new["trace_file"] = "base/a.jsonl", 'new/x y#"><script>.jsonl'
    diff = diff_results(_results(old), _results(new))
    pages = write_diff_html(tmp_path / "out", diff, base_name="old.json", new_name="new.json",
                            trace_dirs=(tmp_path / "old", tmp_path / "new"))  # fmt: skip
    path = tmp_path / "out" / str(pages.page_of(diff.pairs[0]))
    page, html = _Page(path), path.read_text(encoding="utf-8")
    assert "script" not in page.tags and "img" not in page.tags and "<script>" not in html
    assert "calls[0]:<img src=x onerror=alert(1)> fail <script>alert(2)</script> 北京" in page.words
    assert "forbidden_tools" not in page.words  # a passed check is not listed
    assert page.links[-2:] == ["../../old/base/a.jsonl", "../../new/new/x%20y%23%22%3E%3Cscript%3E.jsonl"]
