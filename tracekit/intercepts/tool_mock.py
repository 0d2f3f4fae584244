"""``tool_mock``: mocked results, chosen by the call's input or by the call's position.

The seeds' shape (工具模拟配置)::

    {"type": "tool_mock", "mocked_calls": [
        {"tool": "taobao_search_products", "params_match": {"keyword": "羽毛球鞋 李宁"},
         "inject_result": {"is_error": false, "content": "{\\"total\\": 0, ...}"}},
        {"tool": "search_flights", "inject_result": {...}}]}

How a call finds its mock (a pure function of the conversation, so re-sent histories agree):

1. Mocks of the call's tool whose ``params_match`` the call's input contains (every key with an equal
   value; nested objects compared the same way). When several match, the k-th call that matches this
   same set of mocks gets the k-th of them, the last one repeating.
2. Otherwise the tool's mocks without ``params_match``, in order: the k-th call of the tool that no
   ``params_match`` mock claimed gets the k-th of them, the last one repeating (so a single mock answers
   every call, as a case whose searches "all return empty" needs).
3. Otherwise the agent's own result stands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracekit.errors import CaseError
from tracekit.intercepts.base import Replacement, SeenCall
from tracekit.intercepts.tool_intercept import replacement_from_config


@dataclass(frozen=True)
class MockedCall:
    """One entry of ``mocked_calls``."""

    tool: str
    replacement: Replacement
    params_match: Mapping[str, Any] | None = None

    def matches(self, tool_input: Any) -> bool:
        """Whether a call's input contains every key/value of ``params_match``."""
        return self.params_match is not None and contains(tool_input, self.params_match)


class ToolMock:
    """Answers calls with mocked results, by input (``params_match``) or by position."""

    def __init__(self, mocked_calls: Sequence[MockedCall]) -> None:
        if not mocked_calls:
            raise CaseError("tool_mock: mocked_calls is empty")
        self.mocked_calls = tuple(mocked_calls)

    def replacement_for(self, call: SeenCall) -> Replacement | None:
        """The mocked result for ``call`` (see the module docstring for the rules)."""
        own = [mock for mock in self.mocked_calls if mock.tool == call.tool]
        if not own:
            return None
        matching = self._matching(own, call.input)
        if matching:
            rank = sum(1 for earlier in call.earlier_inputs if self._matching(own, earlier) == matching)
            return matching[min(rank, len(matching) - 1)].replacement
        positional = [mock for mock in own if mock.params_match is None]
        if not positional:
            return None
        rank = sum(1 for earlier in call.earlier_inputs if not self._matching(own, earlier))
        return positional[min(rank, len(positional) - 1)].replacement

    @staticmethod
    def _matching(mocks: list[MockedCall], tool_input: Any) -> list[MockedCall]:
        return [mock for mock in mocks if mock.matches(tool_input)]

    @classmethod
    def from_config(cls, config: Mapping[str, Any], where: str = "tool_mock") -> ToolMock:
        """Build from the seed's JSON (``inject_result``; ``result`` is accepted as well)."""
        entries = config.get("mocked_calls")
        if not isinstance(entries, list) or not entries:
            raise CaseError(f"{where}.mocked_calls: expected a non-empty list")
        mocks = []
        for number, entry in enumerate(entries):
            here = f"{where}.mocked_calls[{number}]"
            if not isinstance(entry, Mapping) or not entry.get("tool"):
                raise CaseError(f"{here}: expected an object with 'tool'")
            result = entry.get("inject_result", entry.get("result"))
            if not isinstance(result, Mapping):
                raise CaseError(f"{here}.inject_result: expected an object with content and is_error")
            params = entry.get("params_match")
            if params is not None and not isinstance(params, Mapping):
                raise CaseError(f"{here}.params_match: expected an object")
            replacement = replacement_from_config(result, "tool_mock", f"{here}.inject_result")
            mocks.append(MockedCall(str(entry["tool"]), replacement, params))
        return cls(mocks)

    def __repr__(self) -> str:
        return f"ToolMock({len(self.mocked_calls)} mocked calls)"


def contains(value: Any, expected: Any) -> bool:
    """Whether ``value`` contains ``expected``: objects key by key (recursively), anything else equal."""
    if isinstance(expected, Mapping):
        return isinstance(value, Mapping) and all(
            key in value and contains(value[key], item) for key, item in expected.items()
        )
    return bool(value == expected)
