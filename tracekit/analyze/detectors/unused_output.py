"""``unused_output``: a successful lookup whose identifiers nothing ever used."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from tracekit.analyze.detectors.registry import DetectorContext, DetectorStream, Finding, call_finding, detector
from tracekit.analyze.graph import CallNode
from tracekit.analyze.values import is_identifier_name, leaves, occurs_in, scalar_text, values_at

_UNKNOWN: Any = object()  # a tool not looked up yet (None: not a lookup)


@detector("unused_output", generic_lookup_pattern="lookup")
class UnusedOutput(DetectorStream):
    """A successful lookup call (catalog ``kind: lookup``; without a catalog entry, a tool whose name
    matches ``generic_lookup_pattern``) none of whose identifier values occurs in any later call's
    arguments or in the agent's final answer.

    Decided at the end (the final answer counts): each call's arguments are kept as they come, and a
    lookup is checked against the calls issued after its result came back."""

    def __init__(self, context: DetectorContext, options: dict[str, Any]) -> None:
        super().__init__(context, options)
        self.pattern = str(options.get("generic_lookup_pattern") or "")
        self._lookups: dict[str, list[str] | None] = {}
        self._pending: list[tuple[int, CallNode, list[Any]]] = []  # (position, lookup, its identifier values)
        self._calls: list[CallNode] = []

    def observe(self, node: CallNode) -> list[Finding]:
        if self._pending:  # only the calls after a lookup are read
            self._calls.append(node)
        if node.history or not node.has_result or node.is_error:  # judged and node.succeeded
            return []
        output_ids = self._lookups.get(node.tool, _UNKNOWN)
        if output_ids is _UNKNOWN:
            output_ids = self._lookups[node.tool] = _lookup_output_ids(node.tool, self.context, self.pattern)
        if output_ids is None:
            return []
        values = _identifier_values(node.result, output_ids)
        if values:
            self._pending.append((len(self._calls), node, values))  # the calls after it come from here
        return []

    def finish(self) -> list[Finding]:
        findings = []
        calls = self._calls
        for position, lookup, values in self._pending:
            if _any_used(values, lookup, calls[position:], self.context.final_answer):
                continue
            shown = ", ".join(repr(value) for value in values[:3])
            findings.append(call_finding("unused_output", "info", lookup, f"looked up {shown}, but no later call and "
                                         "not the final answer used it; either pass the identifier on to the call "
                                         "that needs it or skip the lookup."))  # fmt: skip
        return findings


def _lookup_output_ids(tool: str, context: DetectorContext, pattern: str) -> list[str] | None:
    """The output id paths of a lookup tool ([] = generic identifier names), None when not a lookup."""
    catalog = context.catalog
    if catalog is not None and tool in catalog:
        spec = catalog[tool]
        return list(spec.output_ids) if spec.kind == "lookup" else None
    if pattern and _matches(pattern, tool):
        return []
    return None


@lru_cache(maxsize=4096)
def _matches(pattern: str, tool: str) -> bool:
    return re.search(pattern, tool) is not None


def _identifier_values(result: Any, output_ids: list[str]) -> list[Any]:
    if output_ids:
        found = [leaf for path in output_ids for value in values_at(result, path) for _, leaf in leaves(value)]
    else:
        found = [leaf for path, leaf in leaves(result) if is_identifier_name(path)]
    return [value for value in found if scalar_text(value)]


def _any_used(values: list[Any], lookup: CallNode, nodes: list[CallNode], answer: str) -> bool:
    """Whether any value occurs in the arguments of a call issued after the lookup's result came back, or in
    the answer."""
    later = "\n".join([node.argument_text for node in nodes if lookup.returned_before(node)])
    return any(occurs_in(value, later) or occurs_in(value, answer) for value in values)
