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
