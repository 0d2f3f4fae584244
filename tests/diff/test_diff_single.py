"""The single-file HTML diff (``tracekit diff --html-single``): one file holding the index and every changed
pair's page, linked by anchors, nothing outside it, hostile arguments as text, the same bytes twice; the
pairs made by hand in ``test_diff_html.py``."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_diff_html import _diff, _Page

from tracekit.report.diff_html import write_diff_single


def _ids(html: str) -> list[str]:
    return re.findall(r' id="([^"]*)"', html)


def test_one_file_with_every_changed_pair_inside(tmp_path: Path) -> None:
    diff = _diff()
    path = write_diff_single(tmp_path / "out" / "diff.html", diff, base_name="old.json", new_name="new.json")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["diff.html"]
    html = path.read_text(encoding="utf-8")
    page = _Page(path)
    ids = _ids(html)
    assert [name for name, seen in Counter(ids).items() if seen > 1] == []
    assert page.links and all(link.startswith("#") and link[1:] in ids for link in page.links)  # all inside
    assert re.search(r'src="(?!data:)', html) is None and "script" not in page.tags
    changed = [pair for pair in diff.pairs if pair.change != "unchanged"]
    assert html.count('<section class="embedded"') == len(changed) == 4
    assert "#pair-B2-PC-02.A.0" in page.links and 'id="pair-B2-PC-02.A.0"' in html  # linked from its row
    assert 'id="p1-calls"' in html and 'id="p1-row-0"' in html  # each pair's ids apart
    assert "<script>alert(1)</script>" not in html and "alert(1)" in page.words
    again = write_diff_single(tmp_path / "again.html", diff, base_name="old.json", new_name="new.json")
    assert again.read_bytes() == path.read_bytes()


def test_pairs_past_the_cap_are_listed_without_a_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracekit.report.diff_html as diff_html

    monkeypatch.setattr(diff_html, "SINGLE_PAIRS", 2)
    path = write_diff_single(tmp_path / "diff.html", _diff(), base_name="old.json", new_name="new.json")
    html = path.read_text(encoding="utf-8")
    page = _Page(path)
    assert html.count('<section class="embedded"') == 2
    assert "2 more changed pairs are listed without their page" in page.words
    assert all(link[1:] in _ids(html) for link in page.links)


def test_the_cli_writes_it(tmp_path: Path) -> None:
    import shutil

    from click.testing import CliRunner

    from tracekit.cli.main import cli

    root = Path(__file__).resolve().parents[2]
    for side in ("reference", "flawed"):
        for trace in sorted((root / "recordings" / side).glob("B2-PC-0*.jsonl"))[:3]:
            (tmp_path / side).mkdir(exist_ok=True)
            shutil.copy(trace, tmp_path / side / trace.name)
    result = CliRunner().invoke(cli, ["diff", str(tmp_path / "reference"), str(tmp_path / "flawed"), "--cases",
                                      str(root / "cases"), "--html-single", str(tmp_path / "diff.html")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"HTML diff in one file: {tmp_path / 'diff.html'}" in result.output
    html = (tmp_path / "diff.html").read_text(encoding="utf-8")
    assert html.count('<section class="embedded"') == 3 and "trace file" not in html  # no link out of the file
