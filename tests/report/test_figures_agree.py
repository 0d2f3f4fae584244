"""The report shows the statistics the analyze JSON holds, never its own (issue 13): pass^k and the A/B
comparison are computed once, in analyze, and the HTML and the Markdown print them.

On the committed recordings the HTML written in the same command as the JSON shows the JSON's figures;
and a results file whose summary was changed by hand is reported with the changed figures, which a report
recomputing them from the traces could not show.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    out = tmp_path_factory.mktemp("figures")
    result = CliRunner().invoke(cli, ["analyze", str(ROOT / "recordings"), "--cases", str(ROOT / "cases"),
                                      "--json", str(out / "results.json"), "--html", str(out / "html")])  # fmt: skip
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = orjson.loads((out / "results.json").read_bytes())
    return document, (out / "html" / "index.html").read_text(encoding="utf-8"), out


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _section(html: str, anchor: str) -> str:
    start = html.index(f'id="{anchor}"')
    return html[start:html.index("<h2", start + 1)]


def _rows(section: str) -> list[list[str]]:
    """The cells of each body row, as text."""
    body = section.split("<tbody>", 1)[1]
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.DOTALL)]  # fmt: skip


def _dimension_rows(html: str) -> dict[tuple[str, str], list[str]]:
    """The rows of the dimensions table by (dimension, first cell): category labels repeat across dimensions."""
    rows: dict[tuple[str, str], list[str]] = {}
    dimension = ""
    for cells in _rows(_section(html, "dimensions")):
        if len(cells) == 2 and "verdicts over" in cells[1]:
            dimension = cells[0]
        rows[(dimension, cells[0])] = cells
    return rows


def _pass_k_row(html: str) -> list[str]:
    (row,) = [cells for cells in _rows(_section(html, "pass-k")) if cells[0] == "1"]
    return row


def test_the_html_shows_the_json_figures(analyzed: tuple[dict[str, Any], str, Path]) -> None:
    document, html, _ = analyzed
    summary = document["summary"]
    reliability = summary["reliability"]
    assert _pass_k_row(html) == [
        "1", _pct(reliability["mean_pass^k"]["1"]),
        *(_pct(means["1"]) for means in reliability["by_group"].values()),
        *(_pct(run["mean_pass^k"]["1"]) for run in summary["runs"]),
        f"{reliability['tasks']['1']:,}",
    ]  # fmt: skip
    runs = {cells[0]: cells for cells in _rows(_section(html, "runs"))}
    assert len(runs) == len(summary["runs"]) == 2
    for run in summary["runs"]:
        cells = runs[run["run"].removeprefix("run:")]
        assert cells[1:6] == [str(run["verdicts"][r]) for r in ("pass", "acceptable", "fail", "pending")] + [
            str(run["traces"])]
        ab = run["ab"]
        assert cells[6:9] == [_pct(run["pass_rate"]), _pct(run["mean_pass^k"]["1"]),
                              f"{_pct(ab['A']['pass_rate'])} → {_pct(ab['B']['pass_rate'])} "
                              f"({100 * ab['pass_rate_delta']:+.0f} pp)"]  # fmt: skip
    groups = {cells[0]: cells for cells in _rows(_section(html, "groups"))}
    for dimension, pair in summary["ab"]["by_dimension"].items():
        a, b = pair["A"], pair["B"]
        assert groups[dimension][1:4] == [
            f"{a['results']['pass']}/{a['traces'] - a['pending']} · {_pct(a['pass_rate'])}",
            f"{b['results']['pass']}/{b['traces'] - b['pending']} · {_pct(b['pass_rate'])}",
            f"{100 * pair['pass_rate_delta']:+.0f} pp",
        ]


def test_a_summary_changed_by_hand_is_shown_as_it_is(analyzed: tuple[dict[str, Any], str, Path]) -> None:
    document, html, out = analyzed
    changed = copy.deepcopy(document)
    summary = changed["summary"]
    summary["reliability"]["mean_pass^k"]["1"] = 0.123
    summary["reliability"]["by_group"]["A"]["1"] = 0.456
    summary["runs"][0]["mean_pass^k"]["1"] = 0.789
    dimension = next(iter(summary["ab"]["by_dimension"]))
    summary["ab"]["by_dimension"][dimension]["pass_rate_delta"] = 0.25
    summary["ab"]["pass_rate_delta"] = -0.375
    (out / "changed.json").write_bytes(orjson.dumps(changed))
    result = CliRunner().invoke(cli, ["report", str(out / "changed.json"), "--html", str(out / "changed"),
                                      "--markdown", str(out / "changed.md")])  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = (out / "changed" / "index.html").read_text(encoding="utf-8")
    row = _pass_k_row(shown)
    assert (row[1], row[2], row[4]) == ("12%", "46%", "79%")
    assert _pass_k_row(html)[1:3] != row[1:3]
    groups = {cells[0]: cells for cells in _rows(_section(shown, "groups"))}
    assert groups[dimension][3] == "+25 pp"
    markdown = (out / "changed.md").read_text(encoding="utf-8")
    assert "(-38 pp)" in markdown  # -37.5 rounded to even


def _report(out: Path, document: dict[str, Any], name: str) -> str:
    """The index ``tracekit report`` writes from ``document`` (saved as ``<name>.json``)."""
    (out / f"{name}.json").write_bytes(orjson.dumps(document))
    result = CliRunner().invoke(cli, ["report", str(out / f"{name}.json"), "--html", str(out / name)])
    assert result.exit_code == 0, result.output
    return (out / name / "index.html").read_text(encoding="utf-8")


def test_each_run_carries_its_categories(analyzed: tuple[dict[str, Any], str, Path]) -> None:
    """``summary.runs[].by_category`` is written beside ``by_dimension``, keyed as the summary's own
    ``by_category``; the runs' counts add up to it, and the HTML's per-run category rows show them."""
    document, html, _ = analyzed
    summary = document["summary"]
    added: dict[str, dict[str, int]] = {}
    for run in summary["runs"]:
        assert list(run)[list(run).index("by_dimension") + 1] == "by_category"
        for key, counts in run["by_category"].items():
            assert key == "TT" or key.split("-")[0] in run["by_dimension"]
            for result, count in counts.items():
                added.setdefault(key, dict.fromkeys(counts, 0))[result] += count
    assert added == summary["by_category"] and len(added) > 10
    rows = _dimension_rows(html)
    for run in summary["runs"]:
        name = run["run"].removeprefix("run:")
        for key, counts in run["by_category"].items():
            dimension, label = key.split("-", 1) if "-" in key else (key, key)
            expected = [str(counts[r]) for r in ("pass", "acceptable", "fail", "pending")]
            assert rows[(dimension, f"{label} · {name}")][1:6] == [*expected, str(sum(counts.values()))]


def test_per_run_tallies_changed_by_hand_are_shown_as_they_are(analyzed: tuple[dict[str, Any], str, Path]) -> None:
    """The per-run rows of the dimensions table read the run's ``by_dimension`` and ``by_category``, not the
    traces: counts changed by hand in the summary are what the HTML prints (a report counting the traces
    itself would still print the recorded counts)."""
    document, html, out = analyzed
    changed = copy.deepcopy(document)
    run = changed["summary"]["runs"][0]
    name = run["run"].removeprefix("run:")
    category = next(key for key in run["by_category"] if key.startswith("B2-"))
    run["by_category"][category] = {"pass": 3, "acceptable": 2, "fail": 1, "pending": 4}
    run["by_dimension"]["B2"] = {"pass": 7, "acceptable": 0, "fail": 1, "pending": 0}
    shown = _dimension_rows(_report(out, changed, "per-run"))
    row = ("B2", f"{category.removeprefix('B2-')} · {name}")
    assert shown[row][1:7] == ["3", "2", "1", "4", "10", "50%"]  # pass of the 6 decided
    assert shown[("B2", f"run {name}")][1:7] == ["7", "0", "1", "0", "8", "88%"]
    assert _dimension_rows(html)[row][1:7] != shown[row][1:7]


def test_results_without_per_run_categories_still_report(analyzed: tuple[dict[str, Any], str, Path]) -> None:
    """Results written before ``runs[].by_category`` existed read as having none: the per-run dimension rows
    stay, the per-run category rows are left out (never counted from the traces instead)."""
    document, _, out = analyzed
    older = copy.deepcopy(document)
    for run in older["summary"]["runs"]:
        del run["by_category"]
    rows = [cells[0] for cells in _rows(_section(_report(out, older, "older"), "dimensions"))]
    names = [run["run"].removeprefix("run:") for run in document["summary"]["runs"]]
    assert f"run {names[0]}" in rows and not any(f" · {name}" in row for row in rows for name in names)


def test_pass_rates_are_the_ones_the_json_writes(analyzed: tuple[dict[str, Any], str, Path]) -> None:
    """A run's and a group's pass rate are printed as the JSON writes them (``pass_rate``), not divided again
    from the counts beside them: changed by hand, the HTML and the Markdown show the changed rate."""
    document, _, out = analyzed
    changed = copy.deepcopy(document)
    summary = changed["summary"]
    summary["runs"][0]["pass_rate"] = 0.321
    dimension = next(iter(summary["ab"]["by_dimension"]))
    summary["ab"]["by_dimension"][dimension]["A"]["pass_rate"] = 0.654
    summary["ab"]["B"]["pass_rate"] = 0.987
    shown = _report(out, changed, "rates")
    runs = {cells[0]: cells for cells in _rows(_section(shown, "runs"))}
    assert runs[summary["runs"][0]["run"].removeprefix("run:")][6] == "32%"
    groups = {cells[0]: cells for cells in _rows(_section(shown, "groups"))}
    a = summary["ab"]["by_dimension"][dimension]["A"]
    assert groups[dimension][1] == f"{a['results']['pass']}/{a['traces'] - a['pending']} · 65%"
    result = CliRunner().invoke(cli, ["report", str(out / "rates.json"), "--markdown", str(out / "rates.md")])
    assert result.exit_code == 0, result.output
    markdown = (out / "rates.md").read_text(encoding="utf-8")
    assert "| 32% |" in markdown and "→ 99%" in markdown
