"""Reading a results file entry by entry (``tracekit.results.stream``) and the reports and diff made from it:
the same models as a whole-file read, the same bytes as from the results in memory.

The results are written by ``tracekit analyze`` on the demo recordings in the test (the real producer);
``CHUNK`` is made tiny so that every entry, key and number crosses a read boundary."""

from __future__ import annotations

import filecmp
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.application import load_case_set
from tracekit.cli.main import cli
from tracekit.diff import Pair, diff_results
from tracekit.diff.latency import latency_reader
from tracekit.diff.markdown import render_diff_markdown
from tracekit.diff.stream import Head
from tracekit.errors import ResultsError
from tracekit.report import write_reports
from tracekit.report.diff_html import write_diff_html
from tracekit.results import stream
from tracekit.results.model import read_results_file
from tracekit.results.stream import StoredResults

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("analyzed")
    runner = CliRunner()
    found = {}
    for side in ("reference", "flawed"):
        out = folder / f"{side}.json"
        result = runner.invoke(cli, ["analyze", str(ROOT / "recordings" / side), "--cases", str(ROOT / "cases"),
                                     "--json", str(out), "--no-progress"])  # fmt: skip
        assert result.exit_code == 0, result.output
        found[side] = out
    return found


def test_entries_read_one_at_a_time_are_the_whole_file_models(analyzed: dict[str, Path],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(stream, "CHUNK", 7)
    whole = read_results_file(analyzed["flawed"])
    seen: list[int] = []
    with StoredResults.open(analyzed["flawed"], on_entry=lambda position, _entry: seen.append(position)) as stored:
        assert type(stored) is StoredResults  # scanned, not read whole
        assert seen == list(range(len(whole.traces))) == list(range(len(stored)))
        assert stored.header.summary == whole.summary and stored.header.problems == whole.problems
        assert [entry for _position, entry in stored.entries()] == whole.traces
        assert stored.entry(3) == whole.traces[3]  # again, by offset


def test_any_key_order_and_layout_reads_the_same(analyzed: dict[str, Path], tmp_path: Path) -> None:
    document = json.loads(analyzed["reference"].read_text(encoding="utf-8"))
    document["traces"][0]["meta"]["note"] = "你好 \\ \"quoted\" ]},"  # text that looks like structure
    moved = {"summary": document["summary"], "problems": document["problems"], "traces": document["traces"],
             "tracekit": document["tracekit"]}  # fmt: skip
    path = tmp_path / "pretty.json"
    path.write_text(json.dumps(moved, ensure_ascii=False, indent=3), encoding="utf-8")
    whole = read_results_file(path)
    with StoredResults.open(path) as stored:
        assert [entry for _position, entry in stored.entries()] == whole.traces
        assert stored.entry(0).meta["note"] == "你好 \\ \"quoted\" ]},"


def test_a_bad_entry_is_named_as_a_whole_file_read_names_it(analyzed: dict[str, Path], tmp_path: Path) -> None:
    document = json.loads(analyzed["reference"].read_text(encoding="utf-8"))
    del document["traces"][2]["stats"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ResultsError, match=r"bad\.json: traces\.2\.stats: Field required"):
        StoredResults.open(path)
    path.write_text(json.dumps(document)[:5000], encoding="utf-8")
    with pytest.raises(ResultsError, match=r"bad\.json: not JSON"):
        StoredResults.open(path)


def test_reports_from_the_file_are_the_reports_from_memory(analyzed: dict[str, Path], tmp_path: Path) -> None:
    results = analyzed["flawed"]
    common = {"cases": load_case_set(ROOT / "cases"), "results_dir": results.parent, "results_name": results.name,
              "baseline": analyzed["reference"]}  # fmt: skip
    streamed = write_reports(results, tmp_path / "a", tmp_path / "a.md", tmp_path / "a.xml", **common)
    held = write_reports(read_results_file(results), tmp_path / "b", tmp_path / "b.md", tmp_path / "b.xml", **common)
    assert len(streamed.html) == len(held.html) > 200
    _same_tree(tmp_path / "a", tmp_path / "b")
    assert (tmp_path / "a.xml").read_bytes() == (tmp_path / "b.xml").read_bytes()
    text = (tmp_path / "a.md").read_text(encoding="utf-8").replace(str(tmp_path / "a"), "")
    assert text == (tmp_path / "b.md").read_text(encoding="utf-8").replace(str(tmp_path / "b"), "")


def test_cli_diff_streams_the_same_json_and_markdown_as_the_diff_in_memory(analyzed: dict[str, Path],
                                                                           tmp_path: Path) -> None:  # fmt: skip
    base, new = analyzed["reference"], analyzed["flawed"]
    result = CliRunner().invoke(cli, ["diff", str(base), str(new), "--json", str(tmp_path / "d.json"), "--markdown",
                                      str(tmp_path / "d.md"), "--html", str(tmp_path / "html")])  # fmt: skip
    assert result.exit_code == 0, result.output
    latency = latency_reader(base.parent, new.parent)
    diff = diff_results(read_results_file(base), read_results_file(new), latency=latency)
    assert diff.counts["regression"] > 0
    assert (tmp_path / "d.json").read_text(encoding="utf-8") == diff.model_dump_json(indent=2)
    pages = write_diff_html(tmp_path / "held", diff, base_name=base.name, new_name=new.name,
                            trace_dirs=(str(base.parent), str(new.parent)))  # fmt: skip
    _same_tree(tmp_path / "html", tmp_path / "held")
    assert len(list((tmp_path / "html" / "pairs").iterdir())) == len(pages.files) - 1 >= diff.counts["regression"]

    def link(pair: Pair) -> str | None:
        page = pages.page_of(pair)
        return f"html/{page}" if page else None

    expected = render_diff_markdown(diff, link=link, index="html/index.html")
    assert (tmp_path / "d.md").read_text(encoding="utf-8") == expected and "html/pairs/" in expected


def _same_tree(left: Path, right: Path) -> None:
    compared = filecmp.dircmp(left, right)
    assert not compared.diff_files and not compared.left_only and not compared.right_only, compared.report()
    for name in compared.common_dirs:
        _same_tree(left / name, right / name)


def test_head_counts_every_item_and_keeps_the_first() -> None:
    head = Head(2, "abcde")
    assert len(head) == 5 and list(head) == ["a", "b"] and head[:2] == ["a", "b"] and head
    assert not Head(3)
    with pytest.raises(IndexError):
        head[:3]
