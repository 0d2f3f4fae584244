"""Applying intercepts to the tool results of one request, in the provider's wire format.

A pure function of the conversation: the tool name and input of each result come from the tool call
in the request's own history (or, for a thread continuation that sends only new messages, from the
``prior`` messages the proxy knows the server holds). The request body is never mutated; changed
messages are copied.

Anthropic: ``tool_result`` blocks of user messages answer ``tool_use`` blocks of assistant messages.
OpenAI chat: ``role: tool`` messages answer the ``tool_calls`` of assistant messages (the wire has no
``is_error``: the injected content is sent, the flag is kept in the trace).
OpenAI Responses: ``function_call_output`` items of ``input`` answer ``function_call`` items by ``call_id``
(no ``is_error`` either; a continuation's earlier items are in ``prior``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracekit.intercepts.base import Injection, Replacement, ResultIntercept, SeenCall
from tracekit.trace.canonical import parse_json_arguments


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
    provider: str,
    body: dict[str, Any],
    intercepts: Sequence[ResultIntercept],
    prior: Sequence[dict[str, Any]] = (),
) -> Rewrite:
    """Apply ``intercepts`` to the tool results of ``body`` (a request of ``provider``).

    ``prior`` are wire messages (Responses: items) that come before ``body["messages"]`` (``body["input"]``)
    but are not in it (a thread or ``previous_response_id`` continuation); their calls are known, their
    results are not rewritten (the server holds them).
    Injection ``message_index`` values count ``prior`` messages too.
    """
    field, collect, rewrite_one = _WIRE_FORMATS.get(provider, _WIRE_FORMATS["anthropic"])
    messages = body.get(field)
    if not intercepts or not isinstance(messages, list):
        return Rewrite(body)
    calls = _Calls()
    for message in prior:
        collect(calls, message)
    new_messages: list[Any] = []
    injections: list[Injection] = []
    for offset, message in enumerate(messages):
        if isinstance(message, dict):
            collect(calls, message)
            message = rewrite_one(message, calls, intercepts, len(prior) + offset, injections)
        new_messages.append(message)
    if not injections:
        return Rewrite(body)
    return Rewrite({**body, field: new_messages}, injections)


def _collect_anthropic(calls: _Calls, message: dict[str, Any]) -> None:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            calls.add(block.get("id"), str(block.get("name", "")), block.get("input", {}))


def _rewrite_anthropic(
    message: dict[str, Any],
    calls: _Calls,
    intercepts: Sequence[ResultIntercept],
    index: int,
    injections: list[Injection],
) -> dict[str, Any]:
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return message
    new_content: list[Any] | None = None
    for position, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        claimed = calls.claimed(block.get("tool_use_id"), intercepts)
        if claimed is None:
            continue
        call, replacement = claimed
        if new_content is None:
            new_content = list(content)
        new_block = {**block, "content": replacement.content}
        if replacement.is_error:
            new_block["is_error"] = True
        else:
            new_block.pop("is_error", None)
        new_content[position] = new_block
        injections.append(
            _injection(call, replacement, index, block.get("content"), bool(block.get("is_error", False)))
        )
    return message if new_content is None else {**message, "content": new_content}


def _collect_openai(calls: _Calls, message: dict[str, Any]) -> None:
    if message.get("role") != "assistant":
        return
    for tool_call in message.get("tool_calls") or []:
        if not isinstance(tool_call, dict):
            continue
        function = tool_call.get("function") or {}
        arguments = function.get("arguments")
        tool_input, _ = parse_json_arguments(arguments) if isinstance(arguments, str) else (arguments or {}, True)
        calls.add(tool_call.get("id"), str(function.get("name", "")), tool_input)


def _rewrite_openai(
    message: dict[str, Any],
    calls: _Calls,
    intercepts: Sequence[ResultIntercept],
    index: int,
    injections: list[Injection],
) -> dict[str, Any]:
    if message.get("role") != "tool":
        return message
    claimed = calls.claimed(message.get("tool_call_id"), intercepts)
    if claimed is None:
        return message
    call, replacement = claimed
    injections.append(_injection(call, replacement, index, message.get("content"), original_is_error=False))
    return {**message, "content": _as_text(replacement.content)}


def _collect_responses(calls: _Calls, item: dict[str, Any]) -> None:
    if item.get("type") != "function_call":
        return
    arguments = item.get("arguments")
    tool_input, _ = parse_json_arguments(arguments) if isinstance(arguments, str) else (arguments or {}, True)
    calls.add(item.get("call_id"), str(item.get("name", "")), tool_input)


def _rewrite_responses(
    item: dict[str, Any],
    calls: _Calls,
    intercepts: Sequence[ResultIntercept],
    index: int,
    injections: list[Injection],
) -> dict[str, Any]:
    if item.get("type") != "function_call_output":
        return item
    claimed = calls.claimed(item.get("call_id"), intercepts)
    if claimed is None:
        return item
    call, replacement = claimed
    injections.append(_injection(call, replacement, index, item.get("output"), original_is_error=False))
    return {**item, "output": _as_text(replacement.content)}


_Collect = Callable[[_Calls, dict[str, Any]], None]
_RewriteOne = Callable[[dict[str, Any], _Calls, Sequence[ResultIntercept], int, list[Injection]], dict[str, Any]]

#: Per wire format (provider name): the request field holding the conversation, and how to read its tool
#: calls and rewrite its tool results.
_WIRE_FORMATS: dict[str, tuple[str, _Collect, _RewriteOne]] = {
    "anthropic": ("messages", _collect_anthropic, _rewrite_anthropic),
    "openai": ("messages", _collect_openai, _rewrite_openai),
    "openai_responses": ("input", _collect_responses, _rewrite_responses),
}


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


def _as_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
