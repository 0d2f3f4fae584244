"""``ungrounded_argument``: an identifier argument whose value the agent cannot have seen anywhere."""

from __future__ import annotations

from typing import Any

from tracekit.analyze.detectors.registry import DetectorContext, DetectorStream, Finding, call_finding, detector
from tracekit.analyze.graph import CallNode
from tracekit.analyze.values import is_identifier_name, leaves, occurs_in, scalar_text, values_at


@detector("ungrounded_argument", generic_names=True)
class UngroundedArgument(DetectorStream):
    """An identifier argument (declared in the catalog's ``id_params``, or, with ``generic_names``, named
    ``id`` / ``*_id``) whose value occurs in no earlier tool result, user or system message, or case
    context: the agent made it up."""

    def __init__(self, context: DetectorContext, options: dict[str, Any]) -> None:
        super().__init__(context, options)
        self.generic = bool(options.get("generic_names", True))
        self.found: list[Finding] = []
        self._seen = _SeenResults()
        self._by_key: dict[str, list[tuple[str, Any, str]]] = {}  # identical calls have identical identifier arguments
        self._in_results: set[str] = set()  # values found in the results: still there for later calls

    def observe(self, node: CallNode) -> list[Finding]:
        seen = self._seen
        catalog = self.context.catalog
        # An identifier name ends in "id"/"ids", so without "id" in the arguments' JSON there is none.
        named = self.generic and "id" in node.argument_text
        if node.history or not (
            named or (catalog is not None and node.tool in catalog and bool(catalog[node.tool].id_params))
        ):
            if node.has_result:
                seen.waiting.append(node)
            return []
        arguments = self._by_key.get(node.key)
        if arguments is None:
            arguments = self._by_key[node.key] = _identifier_arguments(node, self.context, named)
        finding = None
        if arguments:
            results = seen.before(node)
            ungrounded = [(path, value) for path, value, text in arguments if not self._grounded(text, node, results)]
            if ungrounded:
                finding = _finding(node, ungrounded)
                self.found.append(finding)
        seen.add(node)
        return [finding] if finding is not None else []

    def finish(self) -> list[Finding]:
        return self.found

    def _grounded(self, text: str, node: CallNode, results: str) -> bool:
        # Results are searched as the text the model read (JSON included): a value occurs when it appears
        # there as a whole token, which covers 110000 in {"city_id": 110000} and "tb_001" in a list.
        if text in self._in_results:
            return True
        if occurs_in(text, results):
            self._in_results.add(text)  # the results seen only grow
            return True
        return _said_before(text, node, self.context)


def _finding(node: CallNode, ungrounded: list[tuple[str, Any]]) -> Finding:
    described = ", ".join(f"{path}={value!r}" for path, value in ungrounded)
    return call_finding("ungrounded_argument", "warning", node, f"was given {described}, a value that appears in no "
                        "earlier tool result, user message or case context; look the identifier up with a tool or ask "
                        "the user instead of guessing it.")  # fmt: skip


def _identifier_arguments(node: CallNode, context: DetectorContext, named: bool) -> list[tuple[str, Any, str]]:
    """The identifier arguments of a call with a text (``scalar_text``), as (path, value, text)."""
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
    return [(path, value, text) for path, value in found.items() if (text := scalar_text(value))]


class _SeenResults:
    """The text of the results returned before a call, grown as the calls come (in order).

    A result joins the text once a later call was issued after it came back; results nearly always come
    back in the order of their calls, so the calls still waiting are few."""

    def __init__(self) -> None:
        self.waiting: list[CallNode] = []
        self._text: str | None = None

    def add(self, node: CallNode) -> None:
        if node.has_result:
            self.waiting.append(node)

    def before(self, node: CallNode) -> str:
        waiting = self.waiting
        if waiting:
            added: list[str] = []
            still: list[CallNode] = []
            for done in waiting:
                if done.returned_before(node):
                    added.append(done.result_text)
                else:
                    still.append(done)
            if added:
                self.waiting = still
                text = "\n".join(added)
                self._text = text if self._text is None else f"{self._text}\n{text}"
        return self._text or ""


def _said_before(text: str, node: CallNode, context: DetectorContext) -> bool:
    """Whether ``text`` occurs in a user or system message before the call, or in the case's context."""
    for message_index, message in context.message_texts:
        if message_index < node.turn and occurs_in(text, message):
            return True
    return any(occurs_in(text, case_text) for case_text in context.case_texts)
