"""``order_violation``: a call made before the call that produces one of its parameters."""

from __future__ import annotations

from tracekit.analyze.detectors.registry import DetectorContext, Finding, detector
from tracekit.analyze.values import values_at


@detector("order_violation")
def order_violation(context: DetectorContext) -> list[Finding]:
    """A call of tool X made before any successful call of tool Y, where the catalog declares that a
    parameter of X takes a value produced by Y (``depends_on``). Needs the tool catalog."""
    if context.catalog is None:
        return []
    dependencies: dict[str, list[tuple[str, str, str]]] = {}
    for tool, param, source_tool, source_path in context.catalog.dependencies():
        dependencies.setdefault(tool, []).append((param, source_tool, source_path))
    findings = []
    nodes = context.graph.nodes
    for node in nodes:
        if node.history or node.tool not in dependencies:
            continue
        required = set(context.catalog[node.tool].input_schema.get("required", []))
        missing = []
        for param, source_tool, source_path in dependencies[node.tool]:
            given = isinstance(node.arguments, dict) and bool(values_at(node.arguments, param))
            if not given and param not in required:
                continue
            if not any(o.tool == source_tool and o.succeeded and o.returned_before(node) for o in nodes):
                missing.append((param, source_tool, source_path))
        if missing:
            needs = "; ".join(f"{param} comes from {tool}.{path}" for param, tool, path in missing)
            first = missing[0][1]
            findings.append(
                Finding(
                    kind="order_violation",
                    severity="error",
                    calls=[node.index],
                    message=(
                        f"{node.tool} (call #{node.index}) was called before any successful {first} call, "
                        f"but {needs}; call {first} first and pass on its result."
                    ),
                )
            )
    return findings
