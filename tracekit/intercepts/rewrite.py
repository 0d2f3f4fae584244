"""Applying intercepts to the tool results of one request, in the provider's wire format.

A pure function of the conversation: the tool name and input of each result come from the tool call
in the request's own history (or, for a thread continuation that sends only new messages, from the
``prior`` messages the proxy knows the server holds). The request body is never mutated; changed
messages are copied.

The wire format is the provider's alone (``tracekit.providers``): where the conversation is in a request
(``request_items``), which tool calls and results an item holds (``item_tool_calls``,
``item_tool_results``) and how a result says something else (``with_tool_result``). Any object with those
functions will do (``WireItems``), so this package does not import the providers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tracekit.intercepts.base import Injection, Replacement, ResultIntercept, SeenCall


class ToolResultRef(Protocol):
    """A tool result as an item carries it (``tracekit.providers.base.ToolResultRef``)."""

    @property
    def position(self) -> int: ...
    @property
    def tool_use_id(self) -> Any: ...
    @property
    def content(self) -> Any: ...
    @property
    def is_error(self) -> bool: ...


class WireItems(Protocol):
    """What rewriting needs of a provider: its requests' items, their tool calls and results."""

    def request_items(self, body: dict[str, Any]) -> list[Any] | None: ...
    def with_request_items(self, body: dict[str, Any], items: list[Any]) -> dict[str, Any]: ...
    def item_tool_calls(self, item: dict[str, Any]) -> list[dict[str, Any]]: ...
    def item_tool_results(self, item: dict[str, Any]) -> Sequence[ToolResultRef]: ...
    def with_tool_result(self, item: dict[str, Any], position: int, content: Any, is_error: bool) -> dict[str, Any]: ...


@dataclass
class Rewrite:
    """The outcome of applying intercepts to one request body."""

    body: dict[str, Any]
    injections: list[Injection] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether any tool result was replaced."""
        return bool(self.injections)


class _Calls:
    """Tool calls of a conversation in order: id -> (tool, input, inputs of earlier calls of that tool)."""

    def __init__(self) -> None:
        self.by_id: dict[str, SeenCall] = {}
        self._inputs: dict[str, list[Any]] = {}

    def add(self, tool_use_id: str | None, tool: str, tool_input: Any) -> None:
        earlier = self._inputs.setdefault(tool, [])
        if tool_use_id is not None:
            self.by_id[tool_use_id] = SeenCall(tool, tool_input, tool_use_id, tuple(earlier))
        earlier.append(tool_input)

    def add_calls(self, blocks: list[dict[str, Any]]) -> None:
        """Add the calls of canonical ``tool_use`` blocks."""
        for block in blocks:
            self.add(block.get("id"), str(block.get("name", "")), block.get("input", {}))

    def claimed(
        self, tool_use_id: object, intercepts: Sequence[ResultIntercept]
    ) -> tuple[SeenCall, Replacement] | None:
        """The call a tool result answers and its replacement, if a known call is claimed by an intercept."""
        call = self.by_id.get(str(tool_use_id))
        replacement = first_replacement(intercepts, call) if call is not None else None
        if call is None or replacement is None:
            return None
        return call, replacement


def first_replacement(intercepts: Sequence[ResultIntercept], call: SeenCall) -> Replacement | None:
    """The replacement of the first intercept that claims ``call`` (case order decides)."""
    for intercept in intercepts:
        replacement = intercept.replacement_for(call)
        if replacement is not None:
            return replacement
    return None


def rewrite_request(
    provider: WireItems,
    body: dict[str, Any],
    intercepts: Sequence[ResultIntercept],
    prior: Sequence[dict[str, Any]] = (),
) -> Rewrite:
    """Apply ``intercepts`` to the tool results of ``body`` (a request in ``provider``'s wire format).

    ``prior`` are wire items that come before the request's own (``request_items``) but are not in it (a
    thread or ``previous_response_id`` continuation); their calls are known, their results are not rewritten
    (the server holds them). Injection ``message_index`` values count ``prior`` items too.
    """
    items = provider.request_items(body)
    if not intercepts or items is None:
        return Rewrite(body)
    calls = _Calls()
    for item in prior:
        calls.add_calls(provider.item_tool_calls(item))
    new_items: list[Any] = []
    injections: list[Injection] = []
    for offset, item in enumerate(items):
        if isinstance(item, dict):
            calls.add_calls(provider.item_tool_calls(item))
            for result in provider.item_tool_results(item):
                claimed = calls.claimed(result.tool_use_id, intercepts)
                if claimed is None:
                    continue
                call, replacement = claimed
                item = provider.with_tool_result(item, result.position, replacement.content, replacement.is_error)
                injections.append(_injection(call, replacement, len(prior) + offset, result.content, result.is_error))
        new_items.append(item)
    if not injections:
        return Rewrite(body)
    return Rewrite(provider.with_request_items(body, new_items), injections)


def _injection(
    call: SeenCall, replacement: Replacement, index: int, original: Any, original_is_error: bool
) -> Injection:
    return Injection(
        mode=replacement.mode,
        tool=call.tool,
        tool_use_id=call.tool_use_id,
        message_index=index,
        original=original,
        original_is_error=original_is_error,
        injected=replacement.content,
        is_error=replacement.is_error,
    )
