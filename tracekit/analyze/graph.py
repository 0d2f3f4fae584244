"""The call graph of a trace: one node per tool call, edges for time, data flow and identity.

Edges (DESIGN.md "Detectors"):

- ``next``: call *i* to the call after it, in the order the agent issued them;
- ``data``: an earlier call's result to a later call's input, when a value of the input occurs in that
  result; the edge names the key path on both sides (``city_id`` -> ``city_id``);
- ``same``: a call to the previous call with the same tool and canonical arguments.

Detectors and checks read the plain lists and indexes here, which cost microseconds per trace;
``to_networkx()`` gives the same graph as a ``networkx.MultiDiGraph`` for reports and ad-hoc study
(networkx is imported only then: it adds a quarter of a second to start-up).

Example::

    graph = build_graph(trace.calls(history_messages=3))
    for edge in graph.data_edges:
        print(edge.source, edge.source_path, "->", edge.target, edge.target_path)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson

from tracekit.analyze.values import (
    MIN_FLOW_LENGTH,
    leaves,
    occurs_in,
    parse_result,
    scalar_text,
)
from tracekit.trace.canonical import canonical_json, content_hash
from tracekit.trace.view import content_text

if TYPE_CHECKING:
    import networkx

    from tracekit.trace import Call, Trace
    from tracekit.trace.models import ToolCall, ToolResult

EdgeKind = Literal["next", "data", "same"]


@dataclass(slots=True)
class CallNode:
    """One tool call with its result, as the detectors see it."""

    index: int
    """The call's ``index`` in the trace (the id findings use)."""
    tool: str
    arguments: Any
    argument_text: str
    """The arguments as canonical JSON text (for finding a value among them)."""
    key: str
    """Tool name and ``argument_text``, NUL-separated: equal keys are identical calls."""
    is_error: bool
    has_result: bool
    turn: int
    """``message_index`` of the assistant message that issued the call (parallel calls share it)."""
    history: bool
    """True when the call belongs to the case's input history: context, never judged or flagged."""
    result_text: str = ""
    result_turn: int | None = None
    """``message_index`` of the message that carried the result."""
    _result: Any = field(default=None, repr=False)
    _parsed: bool = field(default=False, repr=False)

    @property
    def args_hash(self) -> str:
        """A short hash of the canonical arguments."""
        return content_hash(self.arguments, 12)

    @property
    def succeeded(self) -> bool:
        """The call returned a result that is not an error."""
        return self.has_result and not self.is_error

    @property
    def result(self) -> Any:
        """The result parsed as JSON when it is JSON, else its text."""
        if not self._parsed:
            self._result = parse_result(self.result_text)
            self._parsed = True
        return self._result

    @property
    def result_turn_or_turn(self) -> int:
        """The message that carried the result, or the call's own message when there is no result."""
        return self.result_turn if self.result_turn is not None else self.turn

    def returned_before(self, other: CallNode) -> bool:
        """Whether this call's result was in the conversation before ``other`` was issued."""
        if not self.has_result:
            return False
        if self.result_turn is None:
            return self.index < other.index
        return self.result_turn < other.turn


@dataclass(frozen=True)
class Edge:
    """A directed edge between two calls (by trace index)."""

    kind: EdgeKind
    source: int
    target: int
    source_path: str | None = None
    target_path: str | None = None


class CallGraph:
    """The calls of one trace with ``next``, ``same`` and (computed on first use) ``data`` edges."""

    def __init__(self, nodes: list[CallNode]) -> None:
        self.nodes = nodes
        self._by_index = {node.index: node for node in nodes}
        # Edges are made on first use: the default detectors read nodes and keys only.
        self._next_edges: list[Edge] | None = None
        self._same_edges: list[Edge] | None = None
        self._data_edges: list[Edge] | None = None

    @property
    def next_edges(self) -> list[Edge]:
        """Call *i* to the call after it, in the order the agent issued them."""
        if self._next_edges is None:
            self._next_edges = [Edge("next", a.index, b.index) for a, b in itertools.pairwise(self.nodes)]
        return self._next_edges

    @property
    def same_edges(self) -> list[Edge]:
        """A call to the previous call with the same tool and canonical arguments."""
        if self._same_edges is None:
            same: list[Edge] = []
            last_seen: dict[str, int] = {}
            for node in self.nodes:
                previous = last_seen.get(node.key)
                if previous is not None:
                    same.append(Edge("same", previous, node.index))
                last_seen[node.key] = node.index
            self._same_edges = same
        return self._same_edges

    def add(self, node: CallNode) -> None:
        """Append the next call (a graph grown one call at a time, as the fused pass and the guard do)."""
        self.nodes.append(node)
        self._by_index[node.index] = node
        self._next_edges = self._same_edges = self._data_edges = None

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[CallNode]:
        return iter(self.nodes)

    def node(self, index: int) -> CallNode:
        """The node of the call with this trace index."""
        return self._by_index[index]

    @property
    def judged(self) -> list[CallNode]:
        """The calls after the history: the ones checks and detectors judge."""
        return [node for node in self.nodes if not node.history]

    @property
    def data_edges(self) -> list[Edge]:
        """Value provenance: earlier result -> later input, with the key path on both sides."""
        if self._data_edges is None:
            self._data_edges = list(_data_edges(self.nodes))
        return self._data_edges

    @property
    def edges(self) -> list[Edge]:
        """Every edge: next, data, same."""
        return [*self.next_edges, *self.data_edges, *self.same_edges]

    def sources_of(self, index: int, path: str | None = None) -> list[Edge]:
        """Data edges into call ``index`` (optionally only into the input at ``path``)."""
        return [e for e in self.data_edges if e.target == index and (path is None or e.target_path == path)]

    def to_networkx(self) -> networkx.MultiDiGraph:
        """The graph as a ``networkx.MultiDiGraph``: node attributes tool, args_hash, is_error, turn,
        history; edge key is the edge kind, with ``source_path`` / ``target_path`` on data edges."""
        import networkx

        graph = networkx.MultiDiGraph()
        for node in self.nodes:
            graph.add_node(
                node.index, tool=node.tool, args_hash=node.args_hash, is_error=node.is_error,
                turn=node.turn, history=node.history,
            )
        for edge in self.edges:
            attributes = {}
            if edge.kind == "data":
                attributes = {"source_path": edge.source_path, "target_path": edge.target_path}
            graph.add_edge(edge.source, edge.target, key=edge.kind, **attributes)
        return graph


def build_graph(calls: Iterable[Call]) -> CallGraph:
    """The call graph of a trace's calls (``Trace.calls(history_messages)``)."""
    return CallGraph([_node(call.call, call.result, call.history) for call in calls])


def trace_graph(
    trace: Trace,
    history_messages: int = 0,
    *,
    into: CallGraph | None = None,
    observers: Sequence[Callable[[CallNode], object]] = (),
) -> CallGraph:
    """The call graph of a whole trace: ``build_graph(trace.calls(history_messages))`` without making the
    ``Call`` pairs first (the same pairing: each call with the first result that names its index).

    The fused pass of offline analysis: each node is handed to ``observers`` (every detector's
    ``observe``, ``DetectorRun.observers``) as soon as it is made, and appended to ``into`` when given."""
    results: dict[int | None, ToolResult] = {}
    for result in trace.kind("tool_result"):
        results.setdefault(result.call_index, result)
    calls = trace.kind("tool_call")
    if not observers and into is None:
        return CallGraph([_node(record, results.get(record.index), record.message_index < history_messages)
                          for record in calls])  # fmt: skip
    graph = into if into is not None else CallGraph([])
    nodes, by_index = graph.nodes, graph._by_index
    for record in calls:
        node = _node(record, results.get(record.index), record.message_index < history_messages)
        nodes.append(node)
        by_index[node.index] = node
        for observe in observers:
            observe(node)
    return graph


def node_of(record: ToolCall, result: ToolResult | None, history: bool) -> CallNode:
    """The node of one tool_call record with its result (None when it has none): a graph grown call by
    call (``CallGraph.add``) makes its nodes with this."""
    return _node(record, result, history)


def _node(record: ToolCall, result: ToolResult | None, history: bool) -> CallNode:
    name, arguments = record.name, record.input
    try:
        # canonical_json's bytes for arguments read from JSON (string keys), at half its cost: without
        # OPT_NON_STR_KEYS, which orjson pays for on every dict.
        text = orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONEncodeError:  # a key that is not a string, a model, a value too deep: canonical_json says
        text = canonical_json(arguments).decode()
    key = name + "\x00" + text
    if result is None:
        return CallNode(record.index, name, arguments, text, key, False, False, record.message_index, history)
    content = result.content
    return CallNode(
        record.index, name, arguments, text, key, result.is_error, True, record.message_index, history,
        content if type(content) is str else content_text(content), result.message_index,
    )


def _data_edges(nodes: list[CallNode]) -> Iterator[Edge]:
    produced: list[tuple[CallNode, dict[str, str] | None]] = []
    for node in nodes:
        inputs = [(path, text) for path, value in leaves(node.arguments) if (text := _flow_text(value))]
        for source, index in produced:
            if not source.returned_before(node):
                continue
            for path, text in inputs:
                if index is not None:
                    source_path = index.get(text)
                    if source_path is not None:
                        yield Edge("data", source.index, node.index, source_path, path)
                elif occurs_in(text, source.result_text):
                    yield Edge("data", source.index, node.index, "", path)
        if node.has_result:
            produced.append((node, _value_index(node.result)))


def _value_index(result: Any) -> dict[str, str] | None:
    """Scalar text -> first path where it occurs (None for a plain-text result)."""
    if not isinstance(result, (dict, list)):
        return None
    index: dict[str, str] = {}
    for path, value in leaves(result):
        text = _flow_text(value)
        if text is not None:
            index.setdefault(text, path)
    return index


def _flow_text(value: Any) -> str | None:
    text = scalar_text(value)
    return text if text is not None and len(text) >= MIN_FLOW_LENGTH else None
