"""``tracekit diff`` on two real analyses: the reference and the flawed scripted policies' recordings,
analyzed by ``tracekit analyze`` in the test; JSON, Markdown and the --fail-on exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


def _analyze(runner: CliRunner, folder: str, out: Path) -> None:
    result = runner.invoke(cli, ["analyze", str(ROOT / "recordings" / folder), "--cases", str(ROOT / "cases"),
                                 "--json", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output


def test_diff_reference_against_flawed_writes_json_and_markdown_and_fails_on_regression(tmp_path: Path) -> None:
    runner = CliRunner()
    reference, flawed = tmp_path / "reference.json", tmp_path / "flawed.json"
    _analyze(runner, "reference", reference)
    _analyze(runner, "flawed", flawed)
    args = ["diff", str(reference), str(flawed), "--json", str(tmp_path / "d.json"),
            "--markdown", str(tmp_path / "d.md")]  # fmt: skip
    assert runner.invoke(cli, args).exit_code == 0
    failed = runner.invoke(cli, [*args, "--fail-on", "regression"])
    assert failed.exit_code == 1
    document = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    changes = [pair["change"] for pair in document["pairs"]]
    assert changes.count("regression") == document["counts"]["regression"] > 0
    assert changes == sorted(changes, key=lambda c: c != "regression")  # regressions lead
    first = document["pairs"][0]
    assert set(first["key"]) == {"case_id", "group", "repeat"} and first["verdict"]["new"] == "fail"
    markdown = (tmp_path / "d.md").read_text(encoding="utf-8")
    assert "**Regressions (" in markdown and len(markdown.splitlines()) < 40
    same = runner.invoke(cli, ["diff", str(reference), str(reference), "--fail-on", "regression"])
    assert same.exit_code == 0 and "0 regression" in same.output
    # report --baseline judges with the same engine: the same counts
    report = runner.invoke(cli, ["report", str(flawed), "--baseline", str(reference),
                                 "--markdown", str(tmp_path / "r.md")])  # fmt: skip
    assert report.exit_code == 0, report.output
    counts = document["counts"]
    assert (f"{counts['regression']} regressions, {counts['improvement']} improvements, {counts['flaky']} flaky, "
            f"{counts['added']} new, {counts['removed']} missing") in (tmp_path / "r.md").read_text(encoding="utf-8")


def test_diff_of_a_file_that_is_not_results_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    result = CliRunner().invoke(cli, ["diff", str(bad), str(bad)])
    assert result.exit_code == 2 and "bad.json" in result.output


def _links(markdown: Path) -> list[Path]:
    import re

    return [markdown.parent / target for target in re.findall(r"\]\(([^)]+)\)", markdown.read_text(encoding="utf-8"))]


def test_diff_of_two_trace_folders_writes_the_html_with_a_page_per_changed_pair(tmp_path: Path) -> None:
    """BASE and NEW as folders of traces (analyzed by diff against --cases): the three outputs, the Markdown
    linking each regression to its page of the HTML."""
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, [
        "diff", str(ROOT / "recordings" / "reference"), str(ROOT / "recordings" / "flawed"), "--cases",
        str(ROOT / "cases"), "--html", str(out / "html"), "--markdown", str(out / "d.md"),
        "--json", str(out / "d.json"),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads((out / "d.json").read_text(encoding="utf-8"))
    changed = [pair for pair in document["pairs"] if pair["change"] != "unchanged"]
    pages = sorted((out / "html" / "pairs").glob("*.html"))
    assert changed and len(pages) == len(changed)
    index = (out / "html" / "index.html").read_text(encoding="utf-8")
    assert f'<div class="n">{document["counts"]["regression"]}</div>' in index
    assert all(f'href="pairs/{page.name}"' in index for page in pages)
    links = _links(out / "d.md")
    assert links and all(link.is_file() for link in links) and links[-1].name == "index.html"
    timed = [pair for pair in document["pairs"] if pair["latency_ms"]["base"] is not None]
    assert timed, "the latency deltas come from the trace files"


def test_the_streamed_diff_replaces_an_earlier_diff_whole_and_writes_the_single_file_from_its_lists(
    tmp_path: Path,
) -> None:
    """The pages go through the staging folder (``tracekit.report.html.pages_into``): a page of an earlier,
    longer diff goes, the user's own file stays, nothing is left staged; --html-single in the same run holds
    what --html-single alone writes, from the lists the streamed index keeps."""
    recordings = ROOT / "recordings"
    sides = [str(recordings / "reference"), str(recordings / "flawed"), "--cases", str(ROOT / "cases")]
    html = tmp_path / "html"
    (html / "pairs").mkdir(parents=True)
    (html / "pairs" / "GONE-01.html").write_text("an earlier diff's page", encoding="utf-8")
    (html / "notes.txt").write_text("mine", encoding="utf-8")
    both = CliRunner().invoke(cli, ["diff", *sides, "--html", str(html), "--html-single", str(tmp_path / "a.html")])
    assert both.exit_code == 0, both.output
    assert not (html / "pairs" / "GONE-01.html").exists() and (html / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(entry.name for entry in html.iterdir()) == ["index.html", "notes.txt", "pairs"]
    alone = CliRunner().invoke(cli, ["diff", *sides, "--html-single", str(tmp_path / "b.html")])
    assert alone.exit_code == 0, alone.output
    single = (tmp_path / "a.html").read_text(encoding="utf-8")
    assert single == (tmp_path / "b.html").read_text(encoding="utf-8")
    assert single.count('<section class="embedded"') == len(list((html / "pairs").glob("*.html")))


TAU = ROOT / ".." / "shared" / "data" / "tau-bench" / "gpt-4o-airline.json"


@pytest.mark.skipif(not TAU.exists(), reason="the tau-bench trajectories are not in ../shared/data")
def test_diff_of_two_tau_bench_imports_pairs_the_tasks_across_trials(tmp_path: Path) -> None:
    """Trial 0 and trial 1 of the same 50 tasks, each imported by `tracekit import tau-bench` and analyzed; the
    pairs are the tasks, judged by their reward (a task whose reward went 1 -> 0 is a regression)."""
    trajectories = json.loads(TAU.read_text(encoding="utf-8"))
    runner = CliRunner()
    sides = []
    for trial in (0, 1):
        source = tmp_path / f"airline-trial{trial}.json"
        source.write_text(json.dumps([item for item in trajectories if item["trial"] == trial]), encoding="utf-8")
        imported = tmp_path / f"trial{trial}"
        assert runner.invoke(cli, ["import", "tau-bench", str(source), "--out", str(imported)]).exit_code == 0
        sides.append(imported)
    result = runner.invoke(cli, ["diff", str(sides[0]), str(sides[1]), "--json", str(tmp_path / "d.json"),
                                 "--markdown", str(tmp_path / "d.md"), "--html", str(tmp_path / "html")])  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert len(document["pairs"]) == 50 and document["counts"]["added"] == document["counts"]["removed"] == 0
    rewards = {(item["task_id"], item["trial"]): item["reward"] for item in trajectories}
    for pair in document["pairs"]:
        task = int(pair["key"]["case_id"].rsplit("task", 1)[1])
        before, after = rewards[(task, 0)], rewards[(task, 1)]
        expected = "regression" if before > after else "improvement" if after > before else "unchanged"
        assert pair["change"] == expected, pair["key"]
    changed = sum(document["counts"][name] for name in ("regression", "improvement"))
    assert changed and len(list((tmp_path / "html" / "pairs").glob("*.html"))) == changed
    assert all(link.is_file() for link in _links(tmp_path / "d.md"))
