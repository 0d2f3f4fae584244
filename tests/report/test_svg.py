"""The call-graph SVG: well-formed, escaped, deterministic, with next / data / same edges."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tracekit.report.svg import MAX_NODES, GraphEdge, GraphNode, render_call_graph

SVG = "{http://www.w3.org/2000/svg}"


def _graph() -> tuple[list[GraphNode], list[GraphEdge]]:
    nodes = [
        GraphNode(0, "beike_lookup_city_id", turn=1),
        GraphNode(1, '<script>alert("x")</script>', is_error=True, severity="error", turn=3),
        GraphNode(2, "beike_search_resale_housing", injected=True, turn=3),
        GraphNode(3, "beike_lookup_city_id", history=False, severity="warning", turn=5),
    ]
    edges = [
        GraphEdge("next", 0, 1), GraphEdge("next", 1, 2), GraphEdge("next", 2, 3),
        GraphEdge("data", 0, 2, ["city_id → city_id"]), GraphEdge("data", 0, 2, ["name → district"]),
        GraphEdge("same", 0, 3),
        GraphEdge("data", 7, 2, ["dangling"]),  # an edge to a call not drawn is dropped
    ]
    return nodes, edges


def test_svg_is_well_formed_and_escaped() -> None:
    svg = str(render_call_graph(*_graph()))
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert "<script" not in svg and "&lt;script&gt;" in svg
    links = [a for a in root.iter(f"{SVG}a")]
    assert [a.get("href") for a in links] == ["#call-0", "#call-1", "#call-2", "#call-3"]
    classes = [a.get("class") for a in links]
    assert classes == ["node", "node err flag-error", "node inj", "node flag-warning"]


def test_svg_draws_each_edge_kind_once_with_labels() -> None:
    root = ET.fromstring(str(render_call_graph(*_graph())))
    paths = [p.get("class") for p in root.iter(f"{SVG}path") if p.get("class", "").startswith("e-")]
    # three legend samples, then the edges: three next, one merged data edge, one same edge
    assert paths.count("e-next") == 4 and paths.count("e-data") == 2 and paths.count("e-same") == 2
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "lbl"]
    assert labels == ["city_id → city_id, name → district"]
    parallel = [p for p in root.iter(f"{SVG}path") if p.get("class") == "par"]
    assert len(parallel) == 1  # calls 1 and 2 were issued in the same turn


def test_svg_is_deterministic_and_bounded() -> None:
    assert str(render_call_graph(*_graph())) == str(render_call_graph(*_graph()))
    assert str(render_call_graph([], [])) == ""
    many = [GraphNode(i, f"tool_{i}") for i in range(MAX_NODES + 5)]
    svg = str(render_call_graph(many, [GraphEdge("next", i, i + 1) for i in range(MAX_NODES + 4)]))
    assert svg.count("<a href=") == MAX_NODES
    assert "5 more calls not drawn" in svg
