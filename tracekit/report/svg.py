"""The call graph as inline SVG: calls top to bottom in the order issued, ``next`` edges between them,
``data`` edges as arcs on the right (an earlier result feeding a later input, labelled with the key
paths), ``same`` edges (identical repeats) as dashed arcs on the left.

An arc diagram keeps the time order readable at any size and needs no layout engine, so the same
graph always gives the same bytes. Every text that comes from a trace is escaped; nodes link to the
call's place in the timeline (``#call-N``), nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

ROW = 40
BOX_W = 270
BOX_H = 24
LEFT = 70
TOP = 40
MAX_NODES = 400
MAX_LABELS = 80


@dataclass
class GraphNode:
    """A call as the picture shows it."""

    index: int
    tool: str
    is_error: bool = False
    history: bool = False
    injected: bool = False
    severity: str | None = None
    """Worst severity of the findings that name this call (None: not flagged)."""
    turn: int | None = None
    title: str = ""


@dataclass
class GraphEdge:
    """An edge between calls by trace index; ``label`` for data edges (key paths)."""

    kind: str
    source: int
    target: int
    labels: list[str] = field(default_factory=list)


def render_call_graph(nodes: Sequence[GraphNode], edges: Iterable[GraphEdge], id_prefix: str = "") -> Markup:
    """An ``<svg>`` element drawing the calls and edges (empty Markup when there are no calls).

    ``id_prefix`` goes before every id the picture defines or links to (its arrow markers, the timeline's
    ``call-N``), so that several graphs share one document (the single-file report)."""
    if not nodes:
        return Markup("")
    shown = list(nodes[:MAX_NODES])
    row_of = {node.index: row for row, node in enumerate(shown)}
    edge_list = [edge for edge in _merge(edges) if edge.source in row_of and edge.target in row_of]
    data_edges = [edge for edge in edge_list if edge.kind == "data"]
    same_edges = [edge for edge in edge_list if edge.kind == "same"]
    label_data = len(data_edges) <= MAX_LABELS
    widest = max((_bulge(row_of[e.source], row_of[e.target]) for e in data_edges), default=0)
    width = max(LEFT + BOX_W + widest + (200 if label_data and data_edges else 30), LEFT + 680)
    height = TOP + ROW * len(shown) + (30 if len(nodes) > len(shown) else 10)
    height_before = height
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="callgraph" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="call graph">',
        "<title>Call graph</title>",
        _defs(id_prefix),
        _legend(),
    ]
    turns = [node.turn for node in shown]
    for row, node in enumerate(shown):
        if node.turn is not None and row > 0 and turns[row - 1] == node.turn:
            y = _y(row)
            parts.append(f'<path class="par" d="M{LEFT - 6} {y - ROW + BOX_H / 2:.0f} v{ROW}"/>')
    for edge in edge_list:
        if edge.kind == "next":
            a, b = row_of[edge.source], row_of[edge.target]
            parts.append(
                f'<path class="e-next" d="M{LEFT + BOX_W / 2:.0f} {_y(a) + BOX_H / 2:.0f} '
                f'L{LEFT + BOX_W / 2:.0f} {_y(b) - BOX_H / 2 - 2:.0f}" marker-end="url(#{id_prefix}arrow-next)"/>'
            )
    for edge in same_edges:
        parts.append(_arc(edge, row_of, id_prefix, side=-1))
    placed: list[tuple[float, float, float, float]] = []
    for edge in data_edges:
        parts.append(_arc(edge, row_of, id_prefix, side=1, label=label_data, placed=placed))
    more_y = height - 10  # where "… more calls not drawn" goes, under the last drawn call
    unlabelled = len([e for e in data_edges if e.labels]) - len(placed) if label_data else 0
    bottom = max((box[3] for box in placed), default=0.0)
    if unlabelled:  # said under the graph, below everything else
        note_y = max(bottom, float(more_y)) + 16
        parts.append(f'<text class="more" x="{LEFT}" y="{note_y:.0f}">{unlabelled} data edges too crowded to '
                     "label here: hover an edge for the values it carries</text>")
        bottom = note_y + 4
    if bottom + 6 > height:  # labels pushed down past the last call
        height = int(bottom + 6)
        parts[0] = parts[0].replace(f'height="{height_before}"', f'height="{height}"').replace(
            f'0 0 {width} {height_before}"', f'0 0 {width} {height}"')
    for row, node in enumerate(shown):
        parts.append(_node(row, node, id_prefix))
    if len(nodes) > len(shown):
        parts.append(
            f'<text class="more" x="{LEFT}" y="{more_y}">… {len(nodes) - len(shown)} more calls not drawn</text>'
        )
    parts.append("</svg>")
    return Markup("\n".join(parts))


def _merge(edges: Iterable[GraphEdge]) -> list[GraphEdge]:
    """One edge per (kind, source, target), labels joined, in a stable order."""
    merged: dict[tuple[str, int, int], GraphEdge] = {}
    for edge in edges:
        key = (edge.kind, edge.source, edge.target)
        known = merged.get(key)
        if known is None:
            merged[key] = GraphEdge(edge.kind, edge.source, edge.target, list(edge.labels))
        else:
            known.labels.extend(label for label in edge.labels if label not in known.labels)
    return [merged[key] for key in sorted(merged)]


def _y(row: int) -> float:
    return TOP + ROW * row + BOX_H / 2


def _bulge(a: int, b: int) -> int:
    return int(18 + 16 * abs(b - a) ** 0.5)


def text_width(text: str, font_size: float) -> float:
    """Estimated width of a text: CJK and full-width characters one em, others 0.62 em (monospace)."""
    return sum(font_size if _wide(char) else 0.62 * font_size for char in text)


def _wide(char: str) -> bool:
    code = ord(char)
    return 0x1100 <= code <= 0x115F or 0x2E80 <= code <= 0xA4CF or 0xAC00 <= code <= 0xD7A3 \
        or 0xF900 <= code <= 0xFAFF or 0xFE30 <= code <= 0xFE4F or 0xFF00 <= code <= 0xFF60 or code >= 0x1F300


def _arc(edge: GraphEdge, row_of: dict[int, int], id_prefix: str, side: int, label: bool = False,
         placed: list[tuple[float, float, float, float]] | None = None) -> str:
    a, b = row_of[edge.source], row_of[edge.target]
    x = LEFT + (BOX_W if side > 0 else 0)
    bulge = _bulge(a, b) * side
    y1, y2 = _y(a), _y(b)
    css = "e-data" if edge.kind == "data" else "e-same"
    title = f"{edge.kind}: #{edge.source} → #{edge.target}"
    if edge.labels:
        title += " (" + ", ".join(edge.labels) + ")"
    path = (
        f'<path class="{css}" d="M{x} {y1:.0f} C{x + bulge} {y1:.0f} {x + bulge} {y2:.0f} {x + 3 * side} {y2:.0f}" '
        f'marker-end="url(#{id_prefix}arrow-{edge.kind})"><title>{escape(title)}</title></path>'
    )
    if not (label and edge.labels):
        return path
    full = ", ".join(edge.labels)
    text = _truncate(full, 34)
    left = x + int(bulge * 0.75) + 4
    y = round((y1 + y2) / 2 + 4)
    if placed is not None:  # the nearest free line to the edge's middle: labels never overwrite each other
        for offset in LABEL_OFFSETS:
            box = _label_box(left, y + offset, text)
            if not any(_intersect(box, other) for other in placed):
                y += offset
                placed.append(box)
                break
        else:  # no free line near its edge: the label would float away from it; the edge's <title> holds it
            return path
    tooltip = f"<title>{escape(full)}</title>" if text != full else ""
    return path + f'\n<text class="lbl" x="{left}" y="{y}">{tooltip}{escape(text)}</text>'


LABEL_SIZE = 11
LABEL_STEP = 14
#: Where a label may go, from its edge's middle: there, then a line below, above, two below, two above.
LABEL_OFFSETS = (0, LABEL_STEP, -LABEL_STEP, 2 * LABEL_STEP, -2 * LABEL_STEP)


def _label_box(left: float, baseline: float, text: str) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) of a label drawn at ``baseline`` (ascent 0.8 em, descent 0.25 em)."""
    return (left, baseline - 0.8 * LABEL_SIZE, left + text_width(text, LABEL_SIZE), baseline + 0.25 * LABEL_SIZE)


def _intersect(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _node(row: int, node: GraphNode, id_prefix: str) -> str:
    classes = ["node"]
    if node.is_error:
        classes.append("err")
    if node.history:
        classes.append("hist")
    if node.injected:
        classes.append("inj")
    if node.severity:
        classes.append(f"flag-{'error' if node.severity == 'error' else 'warning'}")
    y = TOP + ROW * row
    title = node.title or f"#{node.index} {node.tool}"
    label = _truncate(f"#{node.index} {node.tool}", 34)
    marks = ("  ✗" if node.is_error else "") + ("  ⚑" if node.severity else "") + ("  ⇄" if node.injected else "")
    return (
        f'<a href="#{id_prefix}call-{node.index}" class="{" ".join(classes)}">'
        f"<title>{escape(title)}</title>"
        f'<rect x="{LEFT}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5"/>'
        f'<text x="{LEFT + 8}" y="{y + 16}">{escape(label)}{marks}</text></a>'
    )


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _defs(id_prefix: str) -> str:
    markers = []
    for kind in ("next", "data", "same"):
        markers.append(
            f'<marker id="{id_prefix}arrow-{kind}" class="m-{kind}" viewBox="0 0 10 10" refX="9" refY="5" '
            'markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z"/></marker>'
        )
    return "<defs>" + "".join(markers) + "</defs>"


def _legend() -> str:
    y = 14
    return (
        f'<g class="legend"><path class="e-next" d="M{LEFT} {y} h24"/><text x="{LEFT + 30}" y="{y + 4}">next</text>'
        f'<path class="e-data" d="M{LEFT + 80} {y} h24"/>'
        f'<text x="{LEFT + 110}" y="{y + 4}">data (result → input)</text>'
        f'<path class="e-same" d="M{LEFT + 260} {y} h24"/><text x="{LEFT + 290}" y="{y + 4}">same call</text>'
        f'<text x="{LEFT + 370}" y="{y + 4}">✗ error result · ⚑ finding · ⇄ injected result</text></g>'
    )
