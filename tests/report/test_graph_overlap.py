"""No two text boxes of a call graph intersect, on every trace of ``recordings/`` and of the tau-bench
import (``tracekit import tau-bench`` of ../shared/data/tau-bench, run in the test; skipped when absent).

Text boxes are estimated from the character count and the font size (CJK full width), as a browser lays
out the monospace font the SVG asks for."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.report.svg import text_width

ROOT = Path(__file__).resolve().parents[2]
TAU = ROOT / ".." / "shared" / "data" / "tau-bench"
SVG = re.compile(r"<svg .*?</svg>", re.S)
NS = "{http://www.w3.org/2000/svg}"
Box = tuple[float, float, float, float]


def _boxes(svg: str) -> list[tuple[str, Box]]:
    root = ET.fromstring(svg)
    boxes = []
    for element in root.iter(f"{NS}text"):
        text = (element.text or "") + "".join(child.tail or "" for child in element)
        size = 11.0 if element.get("class") == "lbl" or _in_legend(root, element) else 12.0
        x, y = float(element.get("x", 0)), float(element.get("y", 0))
        boxes.append((text, (x, y - 0.8 * size, x + text_width(text, size), y + 0.25 * size)))
    return boxes


def _in_legend(root: ET.Element, element: ET.Element) -> bool:
    return any(element in list(group) for group in root.iter(f"{NS}g") if group.get("class") == "legend")


def _overlaps(svg: str) -> list[tuple[str, str]]:
    boxes = _boxes(svg)
    found = []
    for i, (text_a, a) in enumerate(boxes):
        for text_b, b in boxes[i + 1:]:
            if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                found.append((text_a, text_b))
    return found


def _report(runner: CliRunner, traces: Path, out: Path, cases: bool = True) -> list[Path]:
    args = ["analyze", str(traces), "--html", str(out), "--json", str(out / "results.json")]
    result = runner.invoke(cli, args + (["--cases", str(ROOT / "cases")] if cases else []))
    assert result.exit_code == 0, result.output
    return sorted((out / "traces").glob("*.html"))


def _check(pages: list[Path]) -> int:
    graphs = 0
    for page in pages:
        for svg in SVG.findall(page.read_text(encoding="utf-8")):
            graphs += 1
            assert _overlaps(svg) == [], page.name
    return graphs


def test_no_text_boxes_intersect_on_the_recordings(tmp_path: Path) -> None:
    pages = _report(CliRunner(), ROOT / "recordings", tmp_path / "rec")
    assert _check(pages) >= 100


def test_no_text_boxes_intersect_on_the_tau_bench_import(tmp_path: Path) -> None:
    files = sorted(TAU.glob("*.json")) if TAU.is_dir() else []
    if not files:
        pytest.skip(f"tau-bench data not found at {TAU} (../shared/data/tau-bench)")
    runner = CliRunner()
    result = runner.invoke(cli, ["import", "tau-bench", str(files[0]), "--out", str(tmp_path / "tau")])
    assert result.exit_code == 0, result.output
    assert _check(_report(runner, tmp_path / "tau", tmp_path / "html", cases=False)) > 0


def test_the_overlap_check_sees_overlaps() -> None:
    svg = ('<svg xmlns="http://www.w3.org/2000/svg"><text class="lbl" x="10" y="20">city_id</text>'
           '<text class="lbl" x="12" y="22">hotel_id</text></svg>')
    assert _overlaps(svg)


def test_two_labels_at_the_same_height_are_drawn_apart() -> None:
    from tracekit.report.svg import GraphEdge, GraphNode, render_call_graph

    # 0 -> 3 and 1 -> 2 have the same midpoint: the arc diagram used to draw both labels at one spot
    nodes = [GraphNode(i, f"tool_{i}") for i in range(4)]
    edges = [GraphEdge("data", 0, 3, ["city_id"]), GraphEdge("data", 1, 2, ["hotel_id"])]
    svg = str(render_call_graph(nodes, edges))
    assert "city_id" in svg and "hotel_id" in svg and _overlaps(svg) == []
