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

Fed one call at a time, ``Boundaries.step`` says whether a call opens a new window or run::

    bounds = Boundaries(context, options)
    for node in nodes:
        new_window, new_run = bounds.step(node)
        ...  # on a new run, close the patterns of the one before
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracekit.analyze.detectors.registry import DetectorContext
    from tracekit.analyze.graph import CallNode

#: The default of each shared option (a detector registers them among its own defaults).
LOOP_WINDOW_DEFAULTS: dict[str, bool] = {"reset_on_user_message": False, "agent_text_breaks": False}


def boundaries(context: DetectorContext, options: dict[str, object]) -> Boundaries | None:
    """The ``Boundaries`` a loop detector with these options needs; None when neither option is set (every
    call is in one window and one run)."""
    if options.get("reset_on_user_message") or options.get("agent_text_breaks"):
        return Boundaries(context, options)
    return None


class Boundaries:
    """Where each call falls, fed in order: whether it opens a new window (a user message came since the
    call before) or a new run (the agent spoke without acting since). The first call opens neither.

    Only the turns before the call are read, so a live session (whose turns grow as it runs) gets the
    same answers as the finished trace."""

    def __init__(self, context: DetectorContext, options: dict[str, object]) -> None:
        self.context = context
        self.reset = bool(options.get("reset_on_user_message"))
        self.breaks = bool(options.get("agent_text_breaks"))
        self._window = -1
        self._run = -1

    def step(self, node: CallNode) -> tuple[bool, bool]:
        """``(new window, new run)`` for the next call; a new window is a new run too."""
        new_window = new_run = False
        if self.reset:
            here = bisect_left(self.context.user_turns, node.turn)
            new_window = self._window != -1 and here != self._window
            self._window = here
        if self.breaks:
            here = bisect_left(self.context.agent_text_turns, node.turn)
            new_run = self._run != -1 and here != self._run
            self._run = here
        return new_window, new_window or new_run


def outcome(node: CallNode) -> tuple[bool, bool, str]:
    """What a call returned, for comparing outcomes: whether it returned, whether it failed, and the text."""
    return node.has_result, node.is_error, node.result_text
