"""A model request as a scripted policy sees it: the case's history, then what the agent did since.

The fake upstream hands the policy each request (Anthropic or OpenAI wire format, thread continuations
already expanded). ``Dialogue`` converts it to canonical messages, splits off the case's input (the first
K messages, the analysis's history rule), and pairs the tool calls made after it with the results the
model sees, which are the results *after* the proxy's intercepts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import orjson

from tracekit.cases import Case
from tracekit.providers.openai import convert_messages
from tracekit.testing import FakeRequest
from tracekit.trace import content_text

_MISSING = object()
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d*)\]")


@dataclass(frozen=True)
class SeenResult:
    """A tool call made after the history, with the result the model saw."""

    name: str
    input: Any
    text: str
    is_error: bool
    turn: int
    """The assistant turn (0-based, after the history) that issued the call."""

    @cached_property
    def data(self) -> Any:
        """The result parsed as JSON (None when it is not JSON)."""
        try:
            return orjson.loads(self.text)
        except orjson.JSONDecodeError:
            return None

    @property
    def failed(self) -> bool:
        """An error result, or one with nothing in it (``total: 0`` / only empty lists)."""
        if self.is_error or not self.text.strip() or self.text.lstrip().startswith(("[错误]", "错误", "Error")):
            return True
        data = self.data
        if isinstance(data, dict):
            lists = [value for value in data.values() if isinstance(value, list)]
            return data.get("total") == 0 or (bool(lists) and not any(lists)) or "error" in data
        return False


class Dialogue:
    """The conversation of one request, split at the case's history (see the module docstring)."""

    def __init__(self, case: Case, request: FakeRequest) -> None:
        self.case = case
        self.request = request
        self.messages = canonical_messages(request)
        self.history = history_length(case)

    @property
    def after(self) -> list[dict[str, Any]]:
        """The messages after the case's input."""
        return self.messages[self.history:]

    @property
    def step(self) -> int:
        """How many assistant turns the agent has taken after the history: the index of the next one."""
        return sum(1 for message in self.after if message.get("role") == "assistant")

    @cached_property
    def results(self) -> list[SeenResult]:
        """Tool calls after the history with their results, in order."""
        return paired_results(self.after)

    @cached_property
    def history_results(self) -> list[SeenResult]:
        """Tool calls of the case's history with their results (context, like a model reading it)."""
        return paired_results(self.messages[: self.history])

    def results_of(self, tool: str) -> list[SeenResult]:
        """The results of one tool, in order."""
        return [result for result in self.results if result.name == tool]

    def last(self, tool: str | None = None) -> SeenResult | None:
        """The latest result (of ``tool``)."""
        found = self.results_of(tool) if tool else self.results
        return found[-1] if found else None

    def value(self, tool: str, path: str, default: Any = _MISSING) -> Any:
        """A value from the latest successful result of ``tool`` at ``path`` (``items[1].product_id``,
        ``items[].product_id`` = the first element that has it), the history's results included."""
        found_in = [*self.history_results, *self.results]
        for result in reversed([result for result in found_in if result.name == tool]):
            if result.failed or result.data is None:
                continue
            found = value_at(result.data, path)
            if found is not _MISSING:
                return found
        if default is not _MISSING:
            return default
        raise LookupError(f"{self.case.id}: no value at {tool}.{path} in the results so far")

    @property
    def user_replies(self) -> list[str]:
        """User messages after the history that are not tool results (simulated user's replies)."""
        texts = []
        for message in self.after:
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str) or not any(
                isinstance(block, dict) and block.get("type") == "tool_result" for block in content or []
            ):
                texts.append(content_text(content))
        return texts


def paired_results(messages: list[dict[str, Any]]) -> list[SeenResult]:
    """The tool calls of ``messages`` paired with their results, in order."""
    calls: dict[str, tuple[str, Any, int]] = {}
    seen: list[SeenResult] = []
    turn = -1
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant":
            turn += 1
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_use":
                    calls[str(block.get("id"))] = (str(block.get("name")), block.get("input"), turn)
            continue
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                name, arguments, issued = calls.get(str(block.get("tool_use_id")), ("?", {}, turn))
                seen.append(SeenResult(name, arguments, content_text(block.get("content")),
                                       bool(block.get("is_error")), issued))
    return seen


def value_at(data: Any, path: str) -> Any:
    """The value at a dotted path with ``[n]`` indexes and ``[]`` for "the first element that has the rest"."""
    parts = [(name, index) for name, index in _PATH_PART.findall(path)]
    return _walk(data, parts)


def _walk(data: Any, parts: list[tuple[str, str]]) -> Any:
    if not parts:
        return data
    (name, index), rest = parts[0], parts[1:]
    if name:
        if not isinstance(data, dict) or name not in data:
            return _MISSING
        return _walk(data[name], rest)
    if not isinstance(data, list):
        return _MISSING
    if index:
        position = int(index)
        return _walk(data[position], rest) if position < len(data) else _MISSING
    for item in data:
        found = _walk(item, rest)
        if found is not _MISSING:
            return found
    return _MISSING


def history_length(case: Case) -> int:
    """K: the case's input messages (history plus the user message), as the analysis counts them."""
    return len(case.input.messages) + (1 if case.input.user is not None or case.input.images else 0)


def canonical_messages(request: FakeRequest) -> list[dict[str, Any]]:
    """The request's conversation as canonical (Anthropic-shaped) messages, system messages dropped."""
    if request.provider == "openai":
        return [message for message in convert_messages(list(request.messages)) if message.get("role") != "system"]
    return [dict(message) for message in request.messages if isinstance(message, dict)]
