"""``order_violation``: a call made before the call that produces one of its parameters."""

from __future__ import annotations

from typing import Any

from tracekit.analyze.detectors.registry import DetectorContext, DetectorStream, Finding, call_finding, detector
from tracekit.analyze.graph import CallNode
from tracekit.analyze.values import leaves, occurs_in, scalar_text, values_at


@detector("order_violation")
class OrderViolation(DetectorStream):
    """A call of tool X made before any successful call of tool Y, where the catalog declares that a
    parameter of X takes a value produced by Y (``depends_on``). Needs the tool catalog.

    The dependency names where the value usually comes from, not the only place: it is satisfied as well
    when the value the call used was produced by an earlier result of any tool (``weibo_get_post_detail``
    with a ``post_id`` from ``weibo_get_hot_search``), or given as that parameter by a user or system
    message or the case's context (a text that holds the value and names the parameter: "已知 city_id 为
    110000"). A city name passed as ``city_id`` because the user said it is still a violation."""

    def __init__(self, context: DetectorContext, options: dict[str, Any]) -> None:
        super().__init__(context, options)
        self.dependencies: dict[str, list[tuple[str, str, str]]] = {}
        if context.catalog is not None:
            for tool, param, source_tool, source_path in context.catalog.dependencies():
                self.dependencies.setdefault(tool, []).append((param, source_tool, source_path))
        self.observing = bool(self.dependencies)
        self.found: list[Finding] = []
        self._succeeded: list[CallNode] = []  # earlier calls that succeeded (sources of values)

    def observe(self, node: CallNode) -> list[Finding]:
        finding = None
        if not node.history and node.tool in self.dependencies:
            finding = self._check(node)
            if finding is not None:
                self.found.append(finding)
        if node.succeeded:
            self._succeeded.append(node)
        return [finding] if finding is not None else []

    def finish(self) -> list[Finding]:
        return self.found

    def _check(self, node: CallNode) -> Finding | None:
        context = self.context
        assert context.catalog is not None
        earlier = [o for o in self._succeeded if o.returned_before(node)]
        required = set(context.catalog[node.tool].input_schema.get("required", []))
        missing = []
        for param, source_tool, source_path in self.dependencies[node.tool]:
            given = _given(node, param)
            if not given and param not in required:
                continue
            if any(o.tool == source_tool for o in earlier):
                continue
            if given and all(_seen_before(value, param, node, earlier, context) for value in given):
                continue
            missing.append((param, source_tool, source_path))
        if not missing:
            return None
        needs = "; ".join(f"{param} comes from {tool}.{path}" for param, tool, path in missing)
        first = missing[0][1]
        return call_finding("order_violation", "error", node, f"was called before any successful {first} call, "
                            f"but {needs}; call {first} first and pass on its result.")  # fmt: skip


def _given(node: CallNode, param: str) -> list[str]:
    """The scalar values the call passed for ``param``, as text."""
    if not isinstance(node.arguments, dict):
        return []
    texts = (scalar_text(leaf) for value in values_at(node.arguments, param) for _, leaf in leaves(value))
    return [text for text in texts if text]


def _seen_before(value: str, param: str, node: CallNode, earlier: list[CallNode], context: DetectorContext) -> bool:
    """Whether ``value`` was there before ``node``: in a successful result of any tool returned before it
    (``earlier``), or given as ``param`` in a user or system message or the case's context."""
    if any(occurs_in(value, o.result_text) for o in earlier):
        return True
    name = param.replace("[]", "").rpartition(".")[2]
    texts = [text for index, text in context.message_texts if index < node.turn] + context.case_texts
    return any(name in text and occurs_in(value, text) for text in texts)
