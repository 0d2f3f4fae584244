"""``ungrounded_argument``: an identifier argument whose value the agent cannot have seen anywhere."""

from __future__ import annotations

from typing import Any

from tracekit.analyze.detectors.registry import DetectorContext, Finding, detector
from tracekit.analyze.graph import CallNode
from tracekit.analyze.values import is_identifier_name, leaves, occurs_in, scalar_text, values_at


@detector("ungrounded_argument", generic_names=True)
def ungrounded_argument(context: DetectorContext) -> list[Finding]:
    """An identifier argument (declared in the catalog's ``id_params``, or, with ``generic_names``, named
    ``id`` / ``*_id``) whose value occurs in no earlier tool result, user or system message, or case
    context: the agent made it up."""
    findings = []
    nodes = context.graph.nodes
    seen: _SeenResults | None = None
    catalog = context.catalog
    generic = bool(context.options.get("generic_names", True))
    by_key: dict[str, list[tuple[str, Any]]] = {}  # identical calls have identical identifier arguments
    for node in nodes:
        if node.history:
            continue
        declared = catalog is not None and node.tool in catalog and bool(catalog[node.tool].id_params)
        # An identifier name ends in "id"/"ids", so without "id" in the arguments' JSON there is none.
        named = generic and "id" in node.argument_text
        if not declared and not named:
            continue  # no identifier argument: nothing to ground
        arguments = by_key.get(node.key)
        if arguments is None:
            arguments = by_key[node.key] = _identifier_arguments(node, context, named)
        if not arguments:
            continue
        if seen is None:
            seen = _SeenResults(nodes)
        results = seen.before(node)
        ungrounded = [(path, value) for path, value in arguments if not _grounded(value, node, results, context)]
        if not ungrounded:
            continue
        described = ", ".join(f"{path}={value!r}" for path, value in ungrounded)
        findings.append(
            Finding(
                kind="ungrounded_argument",
                severity="warning",
                calls=[node.index],
                message=(
                    f"{node.tool} (call #{node.index}) was given {described}, a value that appears in no "
                    f"earlier tool result, user message or case context; look the identifier up with a "
                    f"tool or ask the user instead of guessing it."
                ),
            )
        )
    return findings


def _identifier_arguments(node: CallNode, context: DetectorContext, named: bool) -> list[tuple[str, Any]]:
    arguments = node.arguments
    if not isinstance(arguments, dict):
        return []
    found: dict[str, Any] = {}
    if context.catalog is not None and node.tool in context.catalog:
        for param in context.catalog[node.tool].id_params:
            for value in values_at(arguments, param):
                for path, leaf in leaves(value, param):
                    found.setdefault(path, leaf)
    if named:
        for path, leaf in leaves(arguments):
            if is_identifier_name(path):
                found.setdefault(path, leaf)
    return [(path, value) for path, value in found.items() if scalar_text(value)]


class _SeenResults:
    """The text of the results returned before a call, grown as the calls go on (they are in order)."""

    def __init__(self, nodes: list[CallNode]) -> None:
        produced = [node for node in nodes if node.has_result]
        order = [(node.result_turn_or_turn, node.index) for node in produced]
        if order != sorted(order):  # results nearly always come back in the order of their calls
            produced = [produced[i] for i in sorted(range(len(produced)), key=order.__getitem__)]
        self._pending = produced
        self._seen = 0
        self._text = ""

    def before(self, node: CallNode) -> str:
        pending, seen = self._pending, self._seen
        while seen < len(pending) and pending[seen].returned_before(node):
            seen += 1
        if seen != self._seen:
            added = "\n".join([done.result_text for done in pending[self._seen : seen]])
            self._text = f"{self._text}\n{added}" if self._seen else added
            self._seen = seen
        return self._text


def _grounded(value: Any, node: CallNode, results: str, context: DetectorContext) -> bool:
    # Results are searched as the text the model read (JSON included): a value occurs when it appears
    # there as a whole token, which covers 110000 in {"city_id": 110000} and "tb_001" in a list.
    text = scalar_text(value)
    if text is None or occurs_in(text, results):
        return True
    for message_index, message in context.message_texts:
        if message_index < node.turn and occurs_in(text, message):
            return True
    return any(occurs_in(text, case_text) for case_text in context.case_texts)
