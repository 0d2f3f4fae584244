"""``retry_storm``: a failing call issued again and again with identical arguments."""

from __future__ import annotations

from typing import Any

from tracekit.analyze.detectors.registry import DetectorContext, DetectorStream, Finding, detector, split_history
from tracekit.analyze.detectors.windows import LOOP_WINDOW_DEFAULTS, boundaries
from tracekit.analyze.graph import CallNode

_SAME = (False, False)  # no window options: one window, one run


@detector("retry_storm", failures=3, consecutive=False, **LOOP_WINDOW_DEFAULTS)
class RetryStorm(DetectorStream):
    """A call (tool + arguments) that returned an error and was issued again with identical arguments,
    erroring again, until it has failed ``failures`` times (the failures need not be adjacent; with
    ``consecutive`` they must follow each other with no other call between). The error texts may differ.
    Window options: see ``windows.py``."""

    def __init__(self, context: DetectorContext, options: dict[str, Any]) -> None:
        super().__init__(context, options)
        self.threshold = int(options["failures"])
        self.consecutive = bool(options.get("consecutive"))
        self.bounds = boundaries(context, options)
        self.groups: list[list[CallNode]] = []
        """Every group of failures so far, in the order the offline rule lists them."""
        self._open: dict[str, list[CallNode]] = {}  # anywhere: this window's failures by call
        self._run: list[CallNode] = []  # consecutive: the current run of one failing call
        self._anywhere = self.bounds is None and not self.consecutive  # one window, failures anywhere in it

    def observe(self, node: CallNode) -> list[Finding]:
        failed = node.has_result and node.is_error
        if not failed and self._anywhere:
            return []  # a call that did not fail changes nothing here
        new_window, new_run = self.bounds.step(node) if self.bounds is not None else _SAME
        group: list[CallNode] | None = None
        if self.consecutive:
            if new_run:
                self._run = []
            current = self._run
            if current and failed and node.key == current[0].key:
                current.append(node)
                group = current
            else:
                self._run = group = [node] if failed else []
                if failed:
                    self.groups.append(group)
        else:
            if new_window:
                self._open = {}
            if failed:
                group = self._open.get(node.key)
                if group is None:
                    group = self._open[node.key] = []
                    self.groups.append(group)
                group.append(node)
        if group and self.context.live and len(group) >= self.threshold:
            return self._finding(group)
        return []

    def finish(self) -> list[Finding]:
        return [finding for group in self.groups if len(group) >= self.threshold for finding in self._finding(group)]

    def _finding(self, nodes: list[CallNode]) -> list[Finding]:
        judged, history = split_history(nodes)
        return [_finding(nodes, judged, history, self.consecutive)] if judged else []


def _finding(nodes: list[CallNode], judged: list[int], history: list[int], consecutive: bool) -> Finding:
    first = nodes[0]
    error = first.result_text.strip().splitlines()[0][:120] if first.result_text.strip() else "an error"
    in_a_row = " in a row" if consecutive else ""
    return Finding(
        kind="retry_storm",
        severity="error",
        calls=judged,
        context_calls=history,
        message=(
            f"{first.tool} failed {len(nodes)} times{in_a_row} with identical arguments ({error!r}); after an "
            f"error, change the arguments, switch to another tool, or tell the user instead of "
            f"retrying the same call."
        ),
    )
