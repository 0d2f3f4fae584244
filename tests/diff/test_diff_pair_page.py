"""A pair page of ``tracekit diff --html`` on two real analyses (the reference and the flawed scripted
policies' recordings, analyzed by ``tracekit analyze`` in the test), read as a reviewer would: which checks
failed on each side and a link to each side's trace, changed arguments as ``path: old → new``, and an
aligned-calls table whose columns keep their widths."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_diff_html import _Page

from tracekit.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
PAIR = "pairs/B2-PC-01.A.0.html"  # the flawed policy searched with an empty keyword


@pytest.fixture(scope="module")
def diffed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``reference/results.json``, ``flawed/results.json`` and the HTML diff in ``out/html`` (each in its own
    folder, so links must be made relative to the pages, not to the working directory)."""
    tmp = tmp_path_factory.mktemp("diff")
    runner = CliRunner()
    for side in ("reference", "flawed"):
        result = runner.invoke(cli, ["analyze", str(ROOT / "recordings" / side), "--cases", str(ROOT / "cases"),
                                     "--json", str(tmp / side / "results.json")])  # fmt: skip
        assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["diff", str(tmp / "reference" / "results.json"), str(tmp / "flawed" / "results.json"),
                                 "--html", str(tmp / "out" / "html")])  # fmt: skip
    assert result.exit_code == 0, result.output
    return tmp


def _entry(results: Path, trace_id: str) -> dict[str, Any]:
    document = json.loads(results.read_text(encoding="utf-8"))
    return next(trace for trace in document["traces"] if trace["trace_id"] == trace_id)


def test_a_pair_page_names_each_sides_failed_checks_and_links_both_trace_files(diffed: Path) -> None:
    page_file = diffed / "out" / "html" / PAIR
    page = _Page(page_file)
    base = _entry(diffed / "reference" / "results.json", "B2-PC-01__A__r0@scripted:reference")
    new = _entry(diffed / "flawed" / "results.json", "B2-PC-01__A__r0@scripted:flawed")
    failed = [check for check in new["verdict"]["checks"] if check["result"] == "fail"]
    assert failed and not [check for check in base["verdict"]["checks"] if check["result"] == "fail"]
    row = page.words.split("failed checks", 1)[1].split("task repeats", 1)[0]
    assert row.split()[0] == "none"  # the base passed every check
    for check in failed:  # the new side: each failed check's name and what was seen
        assert f"{check['check']} fail {' '.join(check['evidence'].split())}" in row
    traces = [unquote(link) for link in page.links if link.endswith(".jsonl")]
    assert len(traces) == 2
    targets = [(page_file.parent / link).resolve() for link in traces]
    assert targets == [(diffed / side / entry["trace_file"]).resolve()
                       for side, entry in (("reference", base), ("flawed", new))]  # fmt: skip
    assert targets == [ROOT / "recordings" / side / "B2-PC-01__A__r0.jsonl" for side in ("reference", "flawed")]


def test_changed_arguments_read_as_path_old_new_not_a_deepdiff_dump(diffed: Path) -> None:
    page = _Page(diffed / "out" / "html" / PAIR)
    assert 'keyword: "AirPods Pro 2" → ""' in page.words
    for path in (diffed / "out" / "html" / "pairs").iterdir():
        words = _Page(path).words
        assert "values_changed" not in words and "root[" not in words, path.name


def test_the_aligned_calls_table_has_a_fixed_layout_and_long_arguments_wrap(diffed: Path) -> None:
    html = (diffed / "out" / "html" / PAIR).read_text(encoding="utf-8")
    style = html.split("<style>", 1)[1].split("</style>", 1)[0]
    rules = [(selector.strip(), body) for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", style)]

    def declarations(selector: str) -> str:
        return " ".join(body for found, body in rules if selector in [part.strip() for part in found.split(",")])

    assert "table-layout: fixed" in declarations("table.aligned") and "width: 100%" in declarations("table.aligned")
    assert re.search(r"width:\s*[\d.]+rem", declarations("table.aligned col.op"))  # the mark column stays narrow
    assert "50%" in declarations("table.aligned col.side")  # base and new share the rest equally
    assert "overflow-wrap: anywhere" in declarations("table.aligned .args")
    assert "pre-wrap" in declarations("table.aligned .args")
    table = html.split('<table class="aligned">', 1)[1]
    assert table.startswith('\n<colgroup><col class="op"><col class="side"><col class="side"></colgroup>')
