"""``alternating_loop``: a short cycle of calls (A B, A B C) repeated back to back, identically."""

from __future__ import annotations

from typing import Any

from tracekit.analyze.detectors.registry import DetectorContext, DetectorStream, Finding, detector, split_history
from tracekit.analyze.detectors.windows import LOOP_WINDOW_DEFAULTS, boundaries, outcome
from tracekit.analyze.graph import CallNode
from tracekit.trace.canonical import canonical_json

#: ``_cycle_at`` cannot decide yet: the calls still to come may change its answer.
PENDING = (0, 0)


@detector(
    "alternating_loop", min_period=2, max_period=4, min_repeats=2, error_from=3, same_outcome=False,
    **LOOP_WINDOW_DEFAULTS,
)
class AlternatingLoop(DetectorStream):
    """A cycle of 2-4 calls, not all identical, repeated back to back with the same tool and arguments
    position by position. Calls of the same tools with different arguments (paging, iterating over
    results) never match.

    Options: ``min_period`` / ``max_period`` (cycle lengths), ``min_repeats`` (repetitions of the cycle
    to flag), ``error_from`` (repetitions from which the finding is an error), ``same_outcome`` (each
    call must also have returned what the same position returned in the cycle before), and the window
    options of ``windows.py``.

    The scan goes left to right: at each start the shortest cycle that repeats often enough is taken, as
    long as it goes on, and the scan resumes after it. Fed one call at a time it decides a start as soon as
    the calls seen settle it; live, a cycle that has repeated often enough is reported while it grows.
    """

    def __init__(self, context: DetectorContext, options: dict[str, Any]) -> None:
        super().__init__(context, options)
        self.periods = range(int(options["min_period"]), int(options["max_period"]) + 1)
        self.min_repeats, self.error_from = int(options["min_repeats"]), int(options["error_from"])
        self.same_outcome = bool(options.get("same_outcome"))
        # A cycle repeats only if some call's key comes back within max_period calls; the test skips the
        # starts where none does, which are most of them.
        self.prefilter = self.min_repeats > 1 and self.periods.start >= 1
        self.bounds = boundaries(context, options)
        self.found: list[Finding] = []
        self._numbers: dict[object, int] = {}  # small ints compare fastest
        self._nodes: list[CallNode] = []  # the current run
        self._keys: list[int] = []
        self._start = 0  # calls of the run before this are settled
        self._lengths: dict[int, int] = {}  # period -> length matched so far from _start
        self._shown = (-1, 0)  # (start, repeats) last reported live
        if not context.live and self.bounds is None:
            # Offline, one run: the calls are kept as they come and scanned once at the end.
            self.observe = self._nodes.append  # type: ignore[method-assign,assignment]

    def observe(self, node: CallNode) -> list[Finding]:
        if self.bounds is not None and self.bounds.step(node)[1]:
            self._close_run()
        key = (node.key, outcome(node)) if self.same_outcome else node.key
        self._nodes.append(node)
        self._keys.append(self._numbers.setdefault(key, len(self._numbers)))
        if not self.context.live:
            return []  # offline, the run is scanned once it is complete: same answer, less work
        growing = self._scan(complete=False)
        if growing is None:
            return []
        start, period, repeats = growing
        if (start, repeats) == self._shown:
            return []
        self._shown = (start, repeats)
        finding = self._finding(self._nodes[start : start + period * repeats], period, repeats)
        return [finding] if finding is not None else []

    def finish(self) -> list[Finding]:
        self._close_run()
        return self.found

    def _close_run(self) -> None:
        if len(self._keys) < len(self._nodes):  # kept without their keys (offline)
            numbers, same_outcome = self._numbers, self.same_outcome
            self._keys = [numbers.setdefault((n.key, outcome(n)) if same_outcome else n.key, len(numbers))
                          for n in self._nodes]  # fmt: skip
        self._scan(complete=True)
        self._nodes, self._keys, self._start, self._lengths = [], [], 0, {}

    def _scan(self, complete: bool) -> tuple[int, int, int] | None:
        """Settle every start the calls seen decide (all of them when the run is ``complete``); the cycle
        still growing at the first undecided start, as (start, period, repeats), if one repeated enough."""
        keys, periods = self._keys, self.periods
        prefilter = self.prefilter
        if complete and prefilter and self._start == 0 and len(set(keys)) == len(keys):
            return None
        start, count, nearest, farthest = self._start, len(keys), periods.start, periods.stop
        # ``start`` moves on locally; ``_start`` (and the lengths matched from it) follow before ``_cycle_at``
        # reads them and when the scan stops.
        while start < count:
            if prefilter and keys[start] not in keys[start + nearest : start + farthest]:
                if not complete and start + farthest > count:
                    break  # the key may still come back
                start += 1
                continue
            if start != self._start:
                self._advance(start)
            match = self._cycle_at(start, complete)
            if match is PENDING:
                break
            if match is None:
                start += 1
                continue
            period, repeats, settled = match
            if not settled:
                return start, period, repeats
            finding = self._finding(self._nodes[start : start + period * repeats], period, repeats)
            if finding is not None:
                self.found.append(finding)
            start += period * repeats
        if start != self._start:
            self._advance(start)
        return None

    def _advance(self, start: int) -> None:
        self._start = start
        self._lengths = {}

    def _cycle_at(self, start: int, complete: bool) -> Any:
        """The shortest cycle starting at ``start`` that repeats at least ``min_repeats`` times, as (period,
        repeats, settled); None when there is none; ``PENDING`` when the calls to come decide."""
        keys, min_repeats = self._keys, self.min_repeats
        for period in self.periods:
            if start + period * min_repeats > len(keys):
                return None if complete else PENDING
            if min_repeats > 1 and keys[start + period] != keys[start]:
                continue  # not even one repetition begins: the cheap test that rules out most starts
            if len(set(keys[start : start + period])) == 1:
                continue
            length = self._lengths.get(period, period)
            while start + length < len(keys) and keys[start + length] == keys[start + length - period]:
                length += 1
            repeats = length // period
            if not complete and start + length == len(keys):
                self._lengths[period] = length
                # the cycle may go on: settled later; already a finding if it repeated enough
                return (period, repeats, False) if repeats >= min_repeats else PENDING
            if repeats >= min_repeats:
                return period, repeats, True
        return None

    def _finding(self, span: list[CallNode], period: int, repeats: int) -> Finding | None:
        judged, history = split_history(span)
        if not judged:
            return None
        tools = [node.tool for node in span[:period]]
        if len(set(tools)) < len(tools):  # same tool, other arguments: show them
            tools = [f"{node.tool}({_short(node.arguments)})" for node in span[:period]]
        cycle = " → ".join(tools)
        results = " and identical results" if self.same_outcome else ""
        return Finding(
            kind="alternating_loop",
            severity="error" if repeats >= self.error_from else "warning",
            calls=judged,
            context_calls=history,
            message=(
                f"The cycle {cycle} ran {repeats} times in a row with identical arguments{results} each "
                f"time; the results will not change, so stop the loop and work with what you have, try "
                f"a different approach, or tell the user what is missing."
            ),
        )


def _short(arguments: object, limit: int = 60) -> str:
    text = canonical_json(arguments).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"
