"""Findings, the detector registry and the per-trace context detectors read.

A detector is registered by a decorator with its default options. It is either a ``DetectorStream``, fed
one call at a time (what offline analysis and the live guard both use), or a plain function of the whole
trace, run once every call was seen::

    @detector("slow_start", limit=3)
    class SlowStart(DetectorStream):
        def observe(self, node: CallNode) -> list[Finding]:
            ...  # findings this call makes or grows (live runs act on them at once)
        def finish(self) -> list[Finding]:
            ...  # every finding of the trace

    @detector("late_answer")
    def late_answer(context: DetectorContext) -> list[Finding]:
        ...

Options reach a stream as ``self.options`` and a function as ``context.options`` (defaults overlaid with
``--detector-option`` and ``--config`` values); ``enabled: false`` switches a detector off.

Another package adds a detector through the entry-point group ``tracekit.detectors`` (``tracekit.plugins``):
``load_installed`` imports each when the detectors are (so ``--jobs`` workers have them too), and the
registry holds it like a built-in one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from tracekit.analyze.graph import CallGraph, CallNode, trace_graph
from tracekit.entry_points import DETECTORS, load
from tracekit.errors import DetectorOptionError, PluginError
from tracekit.trace import content_text

if TYPE_CHECKING:
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


def call_finding(kind: str, severity: Severity, node: CallNode, what: str) -> Finding:
    """A finding about one judged call, its message starting with the call: "``tool`` (call #``index``) ``what``"."""
    return Finding(kind, severity, [node.index], f"{node.tool} (call #{node.index}) {what}")


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
    live: bool = False
    """Fed while the session runs (the guard): streams also report findings as they form, not only at the
    end. Offline, only ``finish()`` counts, so streams skip that work."""

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
            spoke = False
            for block in record.content:
                kind = block.get("type")
                if kind == "tool_use" or kind == "server_tool_use":
                    break
                if not spoke and kind == "text" and str(block.get("text", "")).strip():
                    spoke = True
            else:
                if spoke:
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


class DetectorStream:
    """A detector fed one call at a time, in call order, each call once its result is known.

    ``observe(node)`` returns the findings this call made or grew (a live guard acts on them; offline
    analysis ignores them, and a stream may return nothing unless ``context.live``); ``finish()`` returns
    every finding of the trace, exactly what the detector reports offline. Work per call is O(1)
    amortised. Example (calls of one tool beyond a limit)::

        @detector("too_many_searches", limit=5)
        class TooManySearches(DetectorStream):
            def __init__(self, context: DetectorContext, options: dict[str, Any]) -> None:
                super().__init__(context, options)
                self.calls: list[int] = []

            def observe(self, node: CallNode) -> list[Finding]:
                if node.tool == "search" and not node.history:
                    self.calls.append(node.index)
                return []

            def finish(self) -> list[Finding]:
                if len(self.calls) <= self.options["limit"]:
                    return []
                return [Finding("too_many_searches", "warning", self.calls, "search less")]
    """

    observing = True
    """False when ``observe`` would do nothing for any call (set in ``__init__``): then it is not called."""

    def __init__(self, context: DetectorContext, options: dict[str, Any]) -> None:
        self.context = context
        self.options = options

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        """Raise ``DetectorOptionError`` for option values the types alone do not rule out (run when the
        options are resolved, before any trace is read)."""

    def observe(self, node: CallNode) -> list[Finding]:
        """Take the next call; the findings it made or grew."""
        return []

    def finish(self) -> list[Finding]:
        """Every call was seen: the trace's findings."""
        return []


DetectorFunction = Callable[[DetectorContext], list[Finding]]
Registered = DetectorFunction | type[DetectorStream]


class _FunctionStream(DetectorStream):
    """A detector written as a function of the whole trace, run when every call was seen."""

    def __init__(self, context: DetectorContext, options: dict[str, Any], function: DetectorFunction) -> None:
        super().__init__(context, options)
        self.function = function

    def finish(self) -> list[Finding]:
        self.context.options = self.options
        return self.function(self.context)


@dataclass(frozen=True)
class DetectorSpec:
    """A registered detector: its finding kind, the function or stream class, and default options."""

    kind: str
    function: Registered
    defaults: dict[str, Any]

    @property
    def description(self) -> str:
        """First line of the detector's docstring."""
        return (self.function.__doc__ or "").strip().splitlines()[0] if self.function.__doc__ else ""

    def start(self, context: DetectorContext, options: dict[str, Any]) -> DetectorStream:
        """A fresh stream of this detector for one trace."""
        function = self.function
        if isinstance(function, type) and issubclass(function, DetectorStream):
            return function(context, options)
        return _FunctionStream(context, options, function)  # type: ignore[arg-type]


#: Every registered detector by finding kind, in registration order.
REGISTRY: dict[str, DetectorSpec] = {}


#: Installed detectors (entry points) that could not be loaded: ``resolve_options`` raises the first.
INSTALL_PROBLEMS: list[PluginError] = []


def detector(kind: str, **defaults: Any) -> Callable[[Any], Any]:
    """Register a detector (a ``DetectorStream`` class or a function of the context) under its finding
    ``kind`` with default options.

    >>> from tracekit.analyze.detectors import REGISTRY, Finding, detector
    >>> @detector("long_run", limit=50)
    ... def long_run(context):
    ...     "More calls than ``limit``."
    ...     calls = [node.index for node in context.graph.nodes if not node.history]
    ...     if len(calls) <= context.options["limit"]:
    ...         return []
    ...     return [Finding("long_run", "warning", calls, "the agent made more calls than the limit")]
    >>> REGISTRY["long_run"].defaults
    {'enabled': True, 'limit': 50}
    """

    def register(function: Any) -> Any:
        REGISTRY[kind] = DetectorSpec(kind, function, {"enabled": True, **defaults})
        return function

    return register


def load_installed() -> None:
    """Add the detectors installed packages offer (entry-point group ``tracekit.detectors``): each entry
    point names a detector registered with ``@detector`` (its module registers it on import) or a plain
    detector, registered under the entry point's name with no options. One that cannot be loaded is kept
    in ``INSTALL_PROBLEMS`` (it fails the run when options are resolved, naming the package)."""
    try:
        points = load(DETECTORS)
    except PluginError as exc:
        INSTALL_PROBLEMS.append(exc)
        return
    registered = {spec.function for spec in REGISTRY.values()}
    for name, function in points:
        if function in registered:
            continue
        if not callable(function):
            INSTALL_PROBLEMS.append(PluginError(f"the detector {name!r} (entry point group {DETECTORS}) is "
                                                f"{function!r}, not a detector function or DetectorStream class"))
            continue
        detector(name)(function)


def resolve_options(overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Every detector's options: defaults overlaid with ``overrides`` ({kind: {key: value}}).

    Raises ``DetectorOptionError`` for an unknown kind or key, or a value whose type differs from the
    default's (an int where a float is expected is accepted); ``PluginError`` for an installed detector
    that could not be loaded.
    """
    if INSTALL_PROBLEMS:
        raise INSTALL_PROBLEMS[0]
    resolved = {kind: dict(spec.defaults) for kind, spec in REGISTRY.items()}
    for kind, options in (overrides or {}).items():
        if kind not in resolved:
            raise DetectorOptionError(f"unknown detector {kind!r}; known: {', '.join(sorted(resolved))}")
        for key, value in options.items():
            if key not in resolved[kind]:
                known = ", ".join(sorted(resolved[kind]))
                raise DetectorOptionError(f"detector {kind!r} has no option {key!r}; options: {known}")
            resolved[kind][key] = _coerce(kind, key, resolved[kind][key], value)
        function = REGISTRY[kind].function
        if isinstance(function, type) and issubclass(function, DetectorStream):
            function.check_options(resolved[kind])
    return resolved


class DetectorRun:
    """Every enabled detector of one trace, fed the same calls in one pass.

    Example (the fused pass of offline analysis builds the graph and feeds this as it goes)::

        run = DetectorRun(context, options)
        for node in context.graph.nodes:
            run.observe(node)
        findings = run.finish()
    """

    def __init__(self, context: DetectorContext, options: dict[str, dict[str, Any]]) -> None:
        self.streams: list[DetectorStream] = []
        for kind, spec in REGISTRY.items():
            settings = options.get(kind, spec.defaults)
            if settings.get("enabled", True):
                self.streams.append(spec.start(context, settings))
        # Streams that do nothing per call (functions of the whole trace) are not called per call.
        self.observers = [s.observe for s in self.streams
                          if s.observing and type(s).observe is not DetectorStream.observe]  # fmt: skip
        """Each stream's ``observe``: offline, the fused pass calls them straight away."""

    def observe(self, node: CallNode) -> list[Finding]:
        """Feed one call to every detector; the findings it made or grew."""
        found: list[Finding] = []
        for observe in self.observers:
            new = observe(node)
            if new:
                found.extend(new)
        return found

    def finish(self) -> list[Finding]:
        """Every finding of the trace: in registry order, each detector's sorted by first call."""
        findings: list[Finding] = []
        for stream in self.streams:
            found = stream.finish()
            findings.extend(sorted(found, key=_first_call) if len(found) > 1 else found)
        return findings


def run_detectors(context: DetectorContext, options: dict[str, dict[str, Any]]) -> list[Finding]:
    """Run every enabled detector on one trace's graph; findings in registry order, each sorted by first call."""
    run = DetectorRun(context, options)
    for node in context.graph.nodes:
        run.observe(node)
    return run.finish()


def detect(
    trace: Trace,
    options: dict[str, dict[str, Any]],
    *,
    history_messages: int = 0,
    catalog: Catalog | None = None,
    case: Case | None = None,
) -> tuple[CallGraph, list[Finding]]:
    """Offline analysis of one trace in one fused pass: the call graph is built call by call and each call
    is fed to every enabled detector as it is made. Returns the graph and the findings (as
    ``run_detectors`` orders them)."""
    graph = CallGraph([])
    run = DetectorRun(DetectorContext(graph, trace, catalog, case, history_messages), options)
    trace_graph(trace, history_messages, into=graph, observers=run.observers)
    return graph, run.finish()


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
