"""What interrupts a loop: the window and run options the loop detectors share.

Loop detectors look for calls that repeat. Peers differ in what ends the stretch in which repeats count
(``docs/detectors.md`` compares them), so two options say it for each loop detector:

- ``reset_on_user_message``: a new user message starts a new window; calls before it are never compared
  with calls after it (OpenHands' interactive mode looks only after the last user message; Gemini CLI
  resets its loop detection for every new prompt). Off by default: an agent that asks the same thing
  again after the user spoke is still repeating itself.
- ``agent_text_breaks``: an agent message without a tool call (the agent talking, not acting) between
  two calls breaks a back-to-back run or cycle (OpenHands counts such a message as an action of its own,
  so it breaks "the last four actions"). Only back-to-back patterns are affected.

Example::

    for window in windows(context, context.graph.nodes):
        for run in runs(context, window):
            ...  # the calls of ``run`` follow each other with nothing that interrupts a loop between them
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracekit.analyze.detectors.registry import DetectorContext
    from tracekit.analyze.graph import CallNode

#: The default of each shared option (a detector registers them among its own defaults).
LOOP_WINDOW_DEFAULTS: dict[str, bool] = {"reset_on_user_message": False, "agent_text_breaks": False}


def windows(context: DetectorContext, nodes: list[CallNode]) -> Iterator[list[CallNode]]:
    """``nodes`` split at each user message when ``reset_on_user_message`` is set, else all of them."""
    if not context.options.get("reset_on_user_message") or not context.user_turns:
        yield nodes
        return
    yield from _split(nodes, lambda node: bisect_left(context.user_turns, node.turn))


def runs(context: DetectorContext, nodes: list[CallNode]) -> Iterator[list[CallNode]]:
    """The calls of one window split wherever the agent spoke without acting, when ``agent_text_breaks``
    is set (else the window unchanged): stretches in which consecutive calls are back to back."""
    if not context.options.get("agent_text_breaks") or not context.agent_text_turns:
        yield nodes
        return
    yield from _split(nodes, lambda node: bisect_left(context.agent_text_turns, node.turn))


def _split(nodes: list[CallNode], position: Callable[[CallNode], int]) -> Iterator[list[CallNode]]:
    current: list[CallNode] = []
    mark = -1
    for node in nodes:
        here = position(node)
        if current and here != mark:
            yield current
            current = []
        current.append(node)
        mark = here
    if current:
        yield current


def outcome(node: CallNode) -> tuple[bool, bool, str]:
    """What a call returned, for comparing outcomes: whether it returned, whether it failed, and the text."""
    return node.has_result, node.is_error, node.result_text
