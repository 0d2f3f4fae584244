"""Reference actions: the agent's state-changing calls compared with the calls it was expected to make.

A benchmark often ships the expected calls of each task (tau-bench's ``info.task.actions``, which its reward
replays), and a user can write them down (``tracekit analyze --expected-actions FILE``). Given them, the
diagnosis compares the agent's *successful* state-changing calls (a failed call changed nothing) with the
expected ones, canonically (argument order, ``250`` / ``250.0`` / ``"250"``, surrounding spaces do not
matter; list order does; a field the expected call leaves out is not compared), and reports:

- ``reference:arguments``: a call of an expected tool whose arguments differ (the first differing field and
  both values), at that call;
- ``reference:unexpected``: a call of a tool no remaining expected call names, at that call;
- ``reference:missing``: an expected call never made, at the step where the conversation ended;
- ``reference:output``: an expected output (tau-bench's ``info.task.outputs``: a value the answer must
  state) that no answer states, at the last answer.

Which calls change state: the policy's ``write`` class. Without a policy every call is compared, and only a
user-given list is read (a benchmark's own list names lookups too, and which of the agent's calls change
state is then unknown).

Categories (AgentRx, Barke et al. 2026): wrong arguments with a value found nowhere earlier in the
conversation (no tool result, user message, system prompt or earlier argument holds it) are Invention of New
Information; other wrong arguments and an unexpected call are Intent-Plan Misalignment (the agent did
something other than what the task asked); a missing call or output is Instruction/Plan Adherence Failure.

Example::

    reference = Reference.of_meta(trace.header.meta)      # tau-bench import, or meta.expected_actions
    violations = reference_violations(conversation, reference, policy.tools_of("write"), context)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracekit.diagnose.violation import ADHERENCE, INVENTION, MISALIGNED, Violation
from tracekit.errors import ExpectedActionsError
from tracekit.safe_yaml import safe_load_yaml

if TYPE_CHECKING:
    from tracekit.diagnose.conversation import CallStep, Conversation


@dataclass(frozen=True)
class ExpectedCall:
    """One expected tool call: the tool's name and its arguments."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Reference:
    """What a trace was expected to do: calls in order, and values its answers must state."""

    calls: tuple[ExpectedCall, ...] = ()
    outputs: tuple[str, ...] = ()
    from_meta: bool = field(default=False, compare=False)
    """Read from the trace's own header (a benchmark's ground truth) rather than given by the user."""

    @classmethod
    def parse(cls, value: Any, where: str) -> Reference:
        """A reference from a list of calls or ``{actions|calls, outputs}``; ``ValueError`` naming ``where``.

        A call is ``{name, arguments}`` (``kwargs`` and ``input`` are read as ``arguments`` too)."""
        outputs: Any = []
        if isinstance(value, Mapping):
            outputs = value.get("outputs") or []
            value = value.get("actions", value.get("calls", []))
        if not isinstance(value, list):
            raise ValueError(f"{where}: expected a list of calls ({{name, arguments}}), got {type(value).__name__}")
        calls = []
        for position, item in enumerate(value):
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                raise ValueError(f"{where}[{position}]: expected a call with a string `name`")
            arguments: Any = next((item[key] for key in ("arguments", "kwargs", "input") if key in item), {})
            if not isinstance(arguments, Mapping):
                raise ValueError(f"{where}[{position}].arguments: expected a mapping")
            calls.append(ExpectedCall(item["name"], dict(arguments)))
        if not isinstance(outputs, list) or not all(isinstance(o, (str, int, float)) for o in outputs):
            raise ValueError(f"{where}.outputs: expected a list of strings")
        return cls(tuple(calls), tuple(str(o) for o in outputs))

    @classmethod
    def of_meta(cls, meta: Any) -> Reference | None:
        """The reference a trace header carries: ``meta.expected_actions`` (this format), or tau-bench's
        ``meta.info.task`` (``actions`` with ``kwargs``, ``outputs``), as the tau-bench importer keeps it."""
        if not isinstance(meta, Mapping):
            return None
        found: Any = meta.get("expected_actions")
        if found is None:
            info = meta.get("info")
            task = info.get("task") if isinstance(info, Mapping) else None
            if isinstance(task, Mapping) and isinstance(task.get("actions"), list):
                found = {"actions": task["actions"], "outputs": task.get("outputs") or []}
        if found is None:
            return None
        try:
            reference = cls.parse(found, "meta.expected_actions")
        except ValueError:
            return None  # a header's own data in another shape: not a reference, not an error of the trace
        return cls(reference.calls, reference.outputs, from_meta=True)


def load_expected_actions(path: str | Path) -> dict[str, Reference]:
    """An ``--expected-actions`` file (YAML or JSON): ``{trace id or case id: [calls] | {actions, outputs}}``;
    ``ExpectedActionsError`` naming the file and the entry otherwise."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExpectedActionsError(f"{path}: cannot read the expected-actions file ({exc})") from None
    document = safe_load_yaml(text, str(path), ExpectedActionsError)
    if not isinstance(document, dict):
        raise ExpectedActionsError(f"{path}: expected a mapping of trace ids (or case ids) to lists of calls "
                                   "({name, arguments}); see docs/diagnosis.md")  # fmt: skip
    try:
        return {str(key): Reference.parse(value, f"{path}: {key}") for key, value in document.items()}
    except ValueError as exc:
        raise ExpectedActionsError(str(exc)) from None


def reference_violations(
    conversation: Conversation, reference: Reference, writes: set[str] | None, context: list[str]
) -> list[Violation]:
    """The differences between the agent's calls and ``reference`` (module docstring). ``writes``: the
    state-changing tools (None: every call); ``context``: texts the conversation started with (system)."""
    def compared(name: str) -> bool:
        return writes is None or "*" in writes or name in writes

    expected = [call for call in reference.calls if compared(call.name)]
    made = [call for call in conversation.calls if compared(call.name) and call.succeeded]
    canonical = [_canonical(call.arguments) for call in expected]
    used = [False] * len(expected)
    unmatched: list[tuple[CallStep, Any]] = []
    for call in made:
        mine = _canonical(call.arguments)
        position = next((i for i, e in enumerate(expected)
                         if not used[i] and e.name == call.name and _matches(canonical[i], mine)), None)  # fmt: skip
        if position is None:
            unmatched.append((call, mine))
        else:
            used[position] = True
    found = []
    for call, mine in unmatched:
        position = next((i for i, e in enumerate(expected) if not used[i] and e.name == call.name), None)
        if position is None:
            found.append(Violation("reference_mismatch", "reference:unexpected", call.step, call.index,
                                   f"call #{call.index} {call.name} was not expected: no expected call of "
                                   f"{call.name} remains ({_listing(expected, used)}).", MISALIGNED))  # fmt: skip
            continue
        used[position] = True
        path, want, got = _first_difference(canonical[position], mine)
        category = MISALIGNED if _seen_before(got, call, conversation, context) else INVENTION
        found.append(Violation("reference_mismatch", "reference:arguments", call.step, call.index,
                               f"call #{call.index} {call.name} differs from the expected call at {path or '(all)'}: "
                               f"expected {_show(want)}, got {_show(got)}.", category))  # fmt: skip
    end = conversation.last_step
    for position, left in enumerate(expected):
        if not used[position]:
            found.append(Violation("reference_mismatch", "reference:missing", end, None,
                                   f"the expected call {left.name}({_show(left.arguments)}) was never made "
                                   "(successfully) before the conversation ended.", ADHERENCE))  # fmt: skip
    found += _output_violations(conversation, reference.outputs)
    return found


def _output_violations(conversation: Conversation, outputs: tuple[str, ...]) -> list[Violation]:
    """Expected outputs no answer states (read as tau-bench does: lower case, thousands commas removed)."""
    if not outputs:
        return []
    answers = [turn for turn in conversation.turns if turn.role == "assistant" and turn.text.strip()]
    said = " ".join(turn.text for turn in answers).lower().replace(",", "")
    step = answers[-1].step if answers else conversation.last_step
    return [Violation("reference_mismatch", "reference:output", step, None,
                      f"no answer states the expected output {output!r}.", ADHERENCE)
            for output in outputs if output.lower().replace(",", "") not in said]  # fmt: skip


def _canonical(value: Any) -> Any:
    """A value in the form two equivalent arguments share: numbers (and numeric strings) as floats, strings
    stripped, mappings as sorted dicts."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text) if text and text[0] in "+-.0123456789" else text
        except ValueError:
            return text
    if isinstance(value, Mapping):
        return {str(key): _canonical(item) for key, item in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(item) for item in value]
    return value


def _matches(want: Any, got: Any) -> bool:
    """Whether canonical arguments ``got`` are the expected ``want``: a field the expected call leaves out is
    not compared (an optional argument, a key the tool ignores); lists in order."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(_matches(item, got.get(key, _ABSENT)) for key, item in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and len(want) == len(got) and all(map(_matches, want, got))
    return want == got


def _first_difference(want: Any, got: Any, path: str = "") -> tuple[str, Any, Any]:
    """The first field (a dotted path) where ``got`` does not match ``want``, and both values there."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key, item in want.items():
            if not _matches(item, got.get(key, _ABSENT)):
                return _first_difference(item, got.get(key, _ABSENT), f"{path}.{key}".lstrip("."))
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for position, (a, b) in enumerate(zip(want, got, strict=True)):
            if not _matches(a, b):
                return _first_difference(a, b, f"{path}[{position}]")
    return path, want, got


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _seen_before(value: Any, call: CallStep, conversation: Conversation, context: list[str]) -> bool:
    """Whether every scalar of ``value`` occurs in a text the agent had before ``call``."""
    scalars = list(_scalars(value))
    if not scalars:
        return True
    texts = [*context, *(turn.text for turn in conversation.turns if turn.step < call.step)]
    texts += [str(earlier.result_text or "") + str(earlier.arguments) for earlier in conversation.calls
              if earlier.step < call.step]  # fmt: skip
    corpus = "\n".join(texts).lower()
    return all(_spelled(scalar) in corpus for scalar in scalars)


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    elif value is not _ABSENT and value is not None and not isinstance(value, bool):
        yield value


def _spelled(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else str(value)
    return str(value).lower()


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = repr(value) if not isinstance(value, dict) else ", ".join(f"{k}={_show(v)}" for k, v in value.items())
    return text if len(text) <= 160 else text[:157] + "..."


def _listing(expected: list[ExpectedCall], used: list[bool]) -> str:
    left = [call.name for position, call in enumerate(expected) if not used[position]]
    return "left: " + ", ".join(left) if left else "all expected calls were made"
