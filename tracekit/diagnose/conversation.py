"""The conversation of a trace as the invariants read it: turns in order, each tool call with its result.

A ``Turn`` is a user message, an assistant message (its text and the calls it issued) or a tool result,
at its ``message_index``. The invariants ask questions of time ("since the last write", "after the
transfer", "the message the user confirmed"), so everything here is in conversation order.

Example::

    conversation = Conversation.of(trace)
    for call in conversation.calls:
        print(call.step, call.name, call.failed, call.result)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson

from tracekit.trace import content_text

if TYPE_CHECKING:
    from tracekit.trace import Trace

Role = Literal["user", "assistant"]


@dataclass(slots=True)
class CallStep:
    """One tool call with the result the agent saw."""

    index: int
    """The call's ``index`` in the trace (what findings name)."""
    name: str
    arguments: Any
    step: int
    """``message_index`` of the assistant message that issued it."""
    model_call: int | None
    result_text: str | None = None
    """The result as text; None when the trace ends before it."""
    result_step: int | None = None
    failed: bool = False
    _parsed: Any = field(default=None, repr=False)
    _done: bool = field(default=False, repr=False)

    @property
    def succeeded(self) -> bool:
        """The call returned a result that is not an error."""
        return self.result_text is not None and not self.failed

    @property
    def result(self) -> Any:
        """The result parsed as JSON when it is JSON, else its text (None without a result)."""
        if not self._done:
            self._done = True
            text = self.result_text
            try:
                self._parsed = orjson.loads(text) if text else text
            except orjson.JSONDecodeError:
                self._parsed = text
        return self._parsed


@dataclass(slots=True)
class Turn:
    """A user or assistant message: its text and (assistant) the calls it issued."""

    role: Role
    step: int
    text: str
    calls: list[CallStep] = field(default_factory=list)


@dataclass
class Conversation:
    """The turns and calls of one trace, in order."""

    turns: list[Turn]
    calls: list[CallStep]
    last_step: int
    """``message_index`` of the last message of any kind (a tool result included)."""
    last_kind: str
    """What the last message was: ``user``, ``assistant`` or ``tool``."""

    @classmethod
    def of(cls, trace: Trace) -> Conversation:
        """The conversation of ``trace`` (its messages, calls and results)."""
        turns: list[Turn] = []
        calls: list[CallStep] = []
        by_index: dict[int, CallStep] = {}
        last_step, last_kind = -1, ""
        open_turn: Turn | None = None
        for record in trace.records:
            kind = record.kind
            if kind == "user_message":
                text = content_text(record.content)
                if text.strip():
                    turns.append(Turn("user", record.message_index, text))
                    last_step, last_kind = max(last_step, record.message_index), "user"
            elif kind == "assistant_message":
                text = "".join(b.get("text", "") for b in record.content if b.get("type") == "text")
                open_turn = Turn("assistant", record.message_index, text)
                turns.append(open_turn)
                last_step, last_kind = record.message_index, "assistant"
            elif kind == "tool_call":
                call = CallStep(record.index, record.name, record.input, record.message_index, record.model_call)
                calls.append(call)
                by_index[call.index] = call
                if open_turn is not None and open_turn.step == record.message_index:
                    open_turn.calls.append(call)
            elif kind == "tool_result":
                answered = by_index.get(record.call_index) if record.call_index is not None else None
                if answered is not None and answered.result_text is None:
                    answered.result_text = content_text(record.content)
                    answered.result_step = record.message_index
                    answered.failed = bool(record.is_error)
                if record.message_index >= last_step:
                    last_step, last_kind = record.message_index, "tool"
        return cls(turns, calls, last_step, last_kind)

    def user_turns_between(self, after: int, before: int) -> list[Turn]:
        """User turns with ``after < step < before``."""
        return [turn for turn in self.turns if turn.role == "user" and after < turn.step < before]

    def assistant_text_before(self, step: int) -> Turn | None:
        """The last assistant turn with text before ``step``."""
        found = None
        for turn in self.turns:
            if turn.step >= step:
                break
            if turn.role == "assistant" and turn.text.strip():
                found = turn
        return found

    def answers_after(self, step: int) -> list[Turn]:
        """Assistant turns with text after ``step``, in order."""
        return [turn for turn in self.turns if turn.role == "assistant" and turn.step > step and turn.text.strip()]
