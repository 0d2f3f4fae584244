"""Binding a trace to its case, and what analysis knows about that pairing.

A trace is bound to the case named by ``--case`` or by its header's ``case_id``. The case's input is
the history: the first K messages of the trace, K being the number of messages of the case input
(``input.messages`` plus the user message). Calls in the history are context; checks and detectors
judge only what the agent did after them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from tracekit.analyze import tokens

if TYPE_CHECKING:
    from tracekit.analyze.graph import CallGraph, CallNode
    from tracekit.cases import Case, Catalog
    from tracekit.trace import Trace


def history_length(case: Case) -> int:
    """K: the number of messages of the case's input (history plus the user message)."""
    return len(case.input.messages) + (1 if case.input.user is not None or case.input.images else 0)


def bind_case(trace: Trace, cases: Mapping[str, Case], case_id: str | None = None) -> tuple[Case | None, str | None]:
    """The case a trace runs (``case_id`` overrides the header), and a problem when it names an
    unknown case."""
    wanted = case_id or trace.header.case_id
    if wanted is None:
        return None, None
    case = cases.get(wanted)
    if case is None:
        return None, f"{trace.path or trace.trace_id}: case {wanted!r} is not in the case library"
    return case, None


@dataclass
class CaseRun:
    """One trace seen as a run of one case: the graph, the history boundary, the catalog."""

    trace: Trace
    case: Case
    graph: CallGraph
    history_messages: int
    catalog: Catalog | None = None

    @cached_property
    def judged(self) -> list[CallNode]:
        """The calls after the history."""
        return self.graph.judged

    @cached_property
    def final_answer(self) -> str:
        """Text of the agent's last message after the history (empty when it never answered)."""
        message = tokens.final_answer_message(self.trace, self.history_messages)
        return message.text if message is not None else ""

    @cached_property
    def answer_tokens(self) -> tokens.TokenCount:
        """Output tokens of the final answer (provider usage, else tiktoken offline)."""
        return tokens.answer_tokens(self.trace, self.history_messages)
