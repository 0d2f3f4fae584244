"""What an intercept is: a small object with one method that may replace one tool result.

The proxy shows each tool result of a request to the intercepts as a ``SeenCall``: the call it answers
(tool name, input, id) and the inputs of the earlier calls of the same tool in the conversation. An
intercept answers with the ``Replacement`` the model should see instead, or None to leave the result
alone. Intercepts hold no state: the same conversation always gets the same answers, so a history an
agent re-sends is rewritten the same way every time.

Example::

    class AlwaysDown:
        def replacement_for(self, call: SeenCall) -> Replacement | None:
            if call.tool == "maps_weather":
                return Replacement(content="Error: 503", is_error=True)
            return None
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from tracekit.trace.models import Content


@dataclass(frozen=True)
class SeenCall:
    """One tool call whose result is in the request, as an intercept sees it."""

    tool: str
    input: Any
    tool_use_id: str | None = None
    earlier_inputs: tuple[Any, ...] = field(default_factory=tuple)
    """Inputs of the earlier calls of the same tool in the conversation, oldest first."""

    @property
    def ordinal(self) -> int:
        """0-based position of this call among the calls of its tool (the k-th call)."""
        return len(self.earlier_inputs)


@dataclass(frozen=True)
class Replacement:
    """The tool result the model sees instead of the agent's."""

    content: Content
    is_error: bool = False
    mode: str = "tool_intercept"
    """Which kind of intercept produced it (``tool_intercept``, ``tool_mock``, or a custom name)."""


@runtime_checkable
class ResultIntercept(Protocol):
    """The one-method contract of an intercept."""

    def replacement_for(self, call: SeenCall) -> Replacement | None:
        """The result to show the model for ``call``, or None to keep the agent's."""


@dataclass(frozen=True)
class Injection:
    """One tool result an intercept replaced in a request (what the trace's Intercept record holds)."""

    mode: str
    tool: str
    tool_use_id: str | None
    message_index: int
    original: Any
    original_is_error: bool
    injected: Content
    is_error: bool
