"""Findings, the detector registry and the per-trace context detectors read.

A detector is a plain function registered by a decorator with its default options::

    @detector("repeated_call", error_from=3)
    def repeated_call(context: DetectorContext) -> list[Finding]:
        ...

Options reach the function as ``context.options`` (defaults overlaid with ``--detector-option``
and ``--config`` values); ``enabled: false`` switches a detector off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from tracekit.errors import DetectorOptionError
from tracekit.trace import content_text

if TYPE_CHECKING:
    from tracekit.analyze.graph import CallGraph, CallNode
    from tracekit.cases import Case, Catalog
    from tracekit.trace import Trace

Severity = Literal["info", "warning", "error"]


@dataclass
class Finding:
    """Something a detector noticed: which calls, how bad, and what to do about it."""

    kind: str
    severity: Severity
    calls: list[int]
    """Trace indexes of the judged calls that form the pattern (history calls are never listed here)."""
    message: str
    """One or two sentences a person can act on."""
    context_calls: list[int] = field(default_factory=list)
    """History calls that take part in the pattern as context."""
    messages: list[int] = field(default_factory=list)
    """``message_index`` of the agent messages that form the pattern, for a pattern in the agent's text
    (``repeated_text``) rather than in its calls."""

    def to_dict(self) -> dict[str, Any]:
        """The finding as it appears in ``traces[].findings`` of the analyze JSON."""
        value: dict[str, Any] = {"kind": self.kind, "severity": self.severity, "calls": self.calls,
                                 "message": self.message}
        if self.context_calls:
            value["context_calls"] = self.context_calls
        if self.messages:
            value["messages"] = self.messages
        return value


def split_history(nodes: Iterable[CallNode]) -> tuple[list[int], list[int]]:
    """Trace indexes of a pattern's calls as ``(judged, history)``: a finding's ``calls`` and ``context_calls``."""
    judged: list[int] = []
    history: list[int] = []
    for node in nodes:
        (history if node.history else judged).append(node.index)
    return judged, history


@dataclass
class DetectorContext:
    """What a detector sees of one trace: its call graph, the trace, the catalog and case if any."""

    graph: CallGraph
    trace: Trace | None = None
    catalog: Catalog | None = None
    case: Case | None = None
    history_messages: int = 0
    options: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def final_answer(self) -> str:
        """The agent's last text to the user (empty when it never answered)."""
        return self.trace.final_answer() if self.trace is not None else ""

    @cached_property
    def message_texts(self) -> list[tuple[int, str]]:
        """(message_index, text) of the system prompts, then of the user messages in order; system prompts
        count as message -1 (known from the start)."""
        if self.trace is None:
            return []
        texts = [(-1, content_text(record.content)) for record in self.trace.kind("system_message")]
        texts.extend((record.message_index, content_text(record.content)) for record in self.trace.kind("user_message"))
        return texts

    @cached_property
    def user_turns(self) -> list[int]:
        """``message_index`` of every user message, in order: text or images the user sent, including a text
        block beside tool results in the same message (a message of tool results alone is not one)."""
        if self.trace is None:
            return []
        return sorted({record.message_index for record in self.trace.kind("user_message")})

    @cached_property
    def agent_text_turns(self) -> list[int]:
        """``message_index`` of the agent's messages that hold text and no tool call (the agent speaking,
        not acting), in order."""
        if self.trace is None:
            return []
        turns = []
        for record in self.trace.kind("assistant_message"):
            blocks = record.content
            if any(block.get("type") in ("tool_use", "server_tool_use") for block in blocks):
                continue
            if any(block.get("type") == "text" and str(block.get("text", "")).strip() for block in blocks):
                turns.append(record.message_index)
        return turns

    @cached_property
    def case_texts(self) -> list[str]:
        """Texts of the bound case's context and input (where identifiers may be given to the agent)."""
        if self.case is None:
            return []
        context, given = self.case.context, self.case.input
        texts = [context.notes, context.location, given.system, given.user]
        texts.extend(content_text(message.get("content")) for message in given.messages)
        return [text for text in texts if text]


DetectorFunction = Callable[[DetectorContext], list[Finding]]


@dataclass(frozen=True)
class DetectorSpec:
    """A registered detector: its finding kind, function and default options."""

    kind: str
    function: DetectorFunction
    defaults: dict[str, Any]

    @property
    def description(self) -> str:
        """First line of the detector's docstring."""
        return (self.function.__doc__ or "").strip().splitlines()[0] if self.function.__doc__ else ""


#: Every registered detector by finding kind, in registration order.
REGISTRY: dict[str, DetectorSpec] = {}


def detector(kind: str, **defaults: Any) -> Callable[[DetectorFunction], DetectorFunction]:
    """Register a detector function under its finding ``kind`` with default options."""

    def register(function: DetectorFunction) -> DetectorFunction:
        REGISTRY[kind] = DetectorSpec(kind, function, {"enabled": True, **defaults})
        return function

    return register


def resolve_options(overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Every detector's options: defaults overlaid with ``overrides`` ({kind: {key: value}}).

    Raises ``DetectorOptionError`` for an unknown kind or key, or a value whose type differs from the
    default's (an int where a float is expected is accepted).
    """
    resolved = {kind: dict(spec.defaults) for kind, spec in REGISTRY.items()}
    for kind, options in (overrides or {}).items():
        if kind not in resolved:
            raise DetectorOptionError(f"unknown detector {kind!r}; known: {', '.join(sorted(resolved))}")
        for key, value in options.items():
            if key not in resolved[kind]:
                known = ", ".join(sorted(resolved[kind]))
                raise DetectorOptionError(f"detector {kind!r} has no option {key!r}; options: {known}")
            resolved[kind][key] = _coerce(kind, key, resolved[kind][key], value)
    return resolved


def run_detectors(context: DetectorContext, options: dict[str, dict[str, Any]]) -> list[Finding]:
    """Run every enabled detector on one trace; findings in registry order, each sorted by first call."""
    findings: list[Finding] = []
    for kind, spec in REGISTRY.items():
        settings = options.get(kind, spec.defaults)
        if not settings.get("enabled", True):
            continue
        context.options = settings
        found = spec.function(context)
        findings.extend(sorted(found, key=_first_call) if len(found) > 1 else found)
    return findings


def _first_call(finding: Finding) -> list[int]:
    return finding.calls[:1]


def _coerce(kind: str, key: str, default: Any, value: Any) -> Any:
    if default is None or value is None:
        return value
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(default, (int, float)) and isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(default, int) and not isinstance(value, int):
            if not float(value).is_integer():
                raise DetectorOptionError(f"{kind}.{key}: expected an integer, got {value!r}")
            return int(value)
        return value
    elif isinstance(value, type(default)):
        return value
    raise DetectorOptionError(f"{kind}.{key}: expected {type(default).__name__}, got {value!r}")
