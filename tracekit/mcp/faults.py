"""Faults and intercepts at the tool layer: what ``tracekit mcp record --case/--fault`` does to ``tools/call``.

The case's ``tool_intercept`` / ``tool_mock`` (``tracekit.intercepts``) replace a tool's result after the server
answered, so the agent's own MCP client receives the injected result (``isError`` as the case says) and the
trace keeps what the server really returned. Transport faults (``--fault SPEC``) act on the traffic itself:

- ``timeout``: the call is not sent on; the client gets ``isError: true`` "timed out" (after ``:MS`` if given);
- ``error``: the call is not sent on; the client gets ``isError: true`` with the text after ``:``;
- ``latency:MS``: the server's answer is held back MS milliseconds (a slow tool);
- ``cut``: the connection to the client is closed instead of answering (stdio: the wrapper's output ends).

A spec is ``TYPE[:VALUE][@TOOL][#N,M]``: ``@TOOL`` limits it to one tool, ``#N,M`` to the N-th and M-th
(1-based) calls it could hit, e.g. ``timeout@maps_weather#1`` or ``latency:250``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracekit.errors import CaseError
from tracekit.intercepts import InterceptConfig, Replacement, SeenCall

FAULT_KINDS = ("timeout", "error", "latency", "cut")


@dataclass(frozen=True)
class ToolFault:
    """One transport fault on ``tools/call`` (see the module docstring)."""

    kind: str
    value: str = ""
    tool: str | None = None
    on_calls: frozenset[int] | None = None

    @classmethod
    def parse(cls, spec: str) -> ToolFault:
        """Read ``TYPE[:VALUE][@TOOL][#N,M]``; ``CaseError`` naming the part that is wrong."""
        rest, _, calls = spec.partition("#")
        rest, _, tool = rest.partition("@")
        kind, _, value = rest.partition(":")
        if kind not in FAULT_KINDS:
            raise CaseError(f"--fault {spec!r}: the type must be one of {', '.join(FAULT_KINDS)}, got {kind!r}")
        if kind in ("latency",) or (kind == "timeout" and value):
            try:
                if float(value) < 0:
                    raise ValueError
            except ValueError:
                raise CaseError(f"--fault {spec!r}: {kind} takes milliseconds, e.g. {kind}:250") from None
        numbers: frozenset[int] | None = None
        if calls:
            try:
                numbers = frozenset(int(part) for part in calls.split(","))
            except ValueError:
                raise CaseError(f"--fault {spec!r}: after '#' give call numbers such as #1,3") from None
        return cls(kind, value, tool or None, numbers)

    @property
    def milliseconds(self) -> float:
        """The fault's delay (latency, timeout) in milliseconds."""
        return float(self.value) if self.value else 0.0

    def describe(self) -> dict[str, Any]:
        """The fault as the trace's intercept record shows it."""
        shown: dict[str, Any] = {"type": self.kind}
        if self.value:
            shown["value"] = self.value
        if self.tool:
            shown["tool"] = self.tool
        if self.on_calls is not None:
            shown["on_calls"] = sorted(self.on_calls)
        return shown


@dataclass
class ToolPolicy:
    """The intercepts and faults of one recording session; counts calls as they pass (one policy per session)."""

    intercepts: InterceptConfig = field(default_factory=InterceptConfig)
    faults: list[ToolFault] = field(default_factory=list)
    _inputs: dict[str, list[Any]] = field(default_factory=dict)
    _hits: dict[int, int] = field(default_factory=dict)

    def fault_for(self, tool: str) -> ToolFault | None:
        """The first fault that hits this call of ``tool`` (call before ``replacement_for``: every fault whose
        tool matches counts the call)."""
        chosen: ToolFault | None = None
        for number, fault in enumerate(self.faults):
            if fault.tool is not None and fault.tool != tool:
                continue
            self._hits[number] = count = self._hits.get(number, 0) + 1
            if chosen is None and (fault.on_calls is None or count in fault.on_calls):
                chosen = fault
        return chosen

    def replacement_for(self, tool: str, arguments: Any) -> Replacement | None:
        """The case's injected result for this call, or None; the call joins the tool's earlier inputs."""
        earlier = self._inputs.setdefault(tool, [])
        seen = SeenCall(tool, arguments, None, tuple(earlier))
        earlier.append(arguments)
        for intercept in self.intercepts.intercepts:
            replacement = intercept.replacement_for(seen)
            if replacement is not None:
                return replacement
        return None


def injected_result(replacement: Replacement) -> dict[str, Any]:
    """The ``tools/call`` result carrying a case's injected content: a string becomes one text block; a list of
    blocks is passed as it is (text blocks have the same shape in MCP and in the canonical trace)."""
    content = replacement.content
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    return {"content": blocks, "isError": replacement.is_error}
