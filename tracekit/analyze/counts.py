"""What the count checks count, after the history: calls, retries, questions, loop repetitions, attempts.

Definitions (shared with the case library's YAML documentation):

- ``retries`` of a tool: calls of that tool issued after one of its calls returned an error, any
  arguments, until one of its calls succeeds; the largest such run over the trace.
- ``asks``: assistant messages after the history that put a question to the user (and call no tool).
- ``loop_repeats``: the most times a cycle of 2-4 calls ran back to back, the same tools position by
  position (arguments may differ: A B A B = 2); a trace with calls but no such cycle counts 1.
- ``attempts``: distinct calls (tool + canonical arguments) after the history: strategies tried.
- ``calls_after_failure``: calls of a tool made after one of its calls (history included: a failure the
  agent was shown) had returned an error, any arguments, whatever they returned ("继续调用已知失败的工具").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracekit.analyze.graph import CallNode
    from tracekit.trace import AssistantMessage, Trace

#: A reply that asks the user something (Chinese or English question forms).
QUESTION = re.compile(r"[?？]|请问|请提供|请告诉|告诉我|能否提供|麻烦提供|您想|您希望|需要您")


def asks_question(text: str) -> bool:
    """Whether an assistant text asks the user a question."""
    return QUESTION.search(text) is not None


def retries(nodes: list[CallNode], tool: str | None = None) -> tuple[int, list[int]]:
    """The longest run of re-calls of a tool after an error (optionally of one tool), with its calls."""
    best: tuple[int, list[int]] = (0, [])
    pending: dict[str, list[int]] = {}
    for node in nodes:
        if tool is not None and node.tool != tool:
            continue
        if node.tool in pending:
            pending[node.tool].append(node.index)
            run = pending[node.tool]
            if len(run) - 1 > best[0]:
                best = (len(run) - 1, list(run))
        if node.has_result and node.is_error:
            pending.setdefault(node.tool, [node.index])
        elif node.succeeded:
            pending.pop(node.tool, None)
    return best


def loop_repeats(nodes: list[CallNode], periods: range = range(2, 5)) -> tuple[int, list[int]]:
    """The most back-to-back repetitions of a cycle of tools (arguments ignored), with its calls."""
    if not nodes:
        return 0, []
    tools = [node.tool for node in nodes]
    best: tuple[int, list[int]] = (1, [])
    for start in range(len(tools)):
        for period in periods:
            if start + 2 * period > len(tools) or len(set(tools[start : start + period])) == 1:
                continue
            length = period
            while start + length < len(tools) and tools[start + length] == tools[start + length - period]:
                length += 1
            count = length // period
            if count > best[0]:
                best = (count, [node.index for node in nodes[start : start + count * period]])
    return best


def calls_after_failure(nodes: list[CallNode]) -> list[int]:
    """Judged calls of a tool issued after one of that tool's calls had returned an error."""
    calls: list[int] = []
    for node in nodes:
        if node.history:
            continue
        if any(o.tool == node.tool and o.has_result and o.is_error and o.returned_before(node) for o in nodes):
            calls.append(node.index)
    return calls


def attempts(nodes: list[CallNode]) -> int:
    """Distinct calls (tool + canonical arguments)."""
    return len({node.key for node in nodes})


def replies_after(trace: Trace, history_messages: int) -> list[AssistantMessage]:
    """The assistant messages after the history, in order."""
    return [record for record in trace.kind("assistant_message") if record.message_index >= history_messages]


def questions(trace: Trace, history_messages: int) -> list[AssistantMessage]:
    """Assistant messages after the history that ask the user something without calling a tool."""
    return [
        message
        for message in replies_after(trace, history_messages)
        if not any(block.get("type") == "tool_use" for block in message.content) and asks_question(message.text)
    ]
