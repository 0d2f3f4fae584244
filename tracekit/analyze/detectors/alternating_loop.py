"""``alternating_loop``: a short cycle of calls (A B, A B C) repeated back to back, identically."""

from __future__ import annotations

from tracekit.analyze.detectors.registry import DetectorContext, Finding, detector, split_history
from tracekit.analyze.detectors.windows import LOOP_WINDOW_DEFAULTS, outcome, runs, windows
from tracekit.analyze.graph import CallNode
from tracekit.trace.canonical import canonical_json


@detector(
    "alternating_loop", min_period=2, max_period=4, min_repeats=2, error_from=3, same_outcome=False,
    **LOOP_WINDOW_DEFAULTS,
)
def alternating_loop(context: DetectorContext) -> list[Finding]:
    """A cycle of 2-4 calls, not all identical, repeated back to back with the same tool and arguments
    position by position. Calls of the same tools with different arguments (paging, iterating over
    results) never match.

    Options: ``min_period`` / ``max_period`` (cycle lengths), ``min_repeats`` (repetitions of the cycle
    to flag), ``error_from`` (repetitions from which the finding is an error), ``same_outcome`` (each
    call must also have returned what the same position returned in the cycle before), and the window
    options of ``windows.py``.
    """
    options = context.options
    periods = range(int(options["min_period"]), int(options["max_period"]) + 1)
    min_repeats, error_from = int(options["min_repeats"]), int(options["error_from"])
    same_outcome = bool(options.get("same_outcome"))
    numbers: dict[object, int] = {}
    findings: list[Finding] = []
    for window in windows(context, context.graph.nodes):
        for nodes in runs(context, window):
            # small ints compare fastest
            keys = [numbers.setdefault((n.key, outcome(n)) if same_outcome else n.key, len(numbers)) for n in nodes]
            findings.extend(_loops(nodes, keys, periods, min_repeats, error_from, same_outcome))
    return findings


def _loops(
    nodes: list[CallNode], keys: list[int], periods: range, min_repeats: int, error_from: int, same_outcome: bool
) -> list[Finding]:
    findings: list[Finding] = []
    # A cycle repeats only if some call's key comes back within max_period calls; the tests below skip
    # the traces and starts where none does, which are most of them.
    prefilter = min_repeats > 1 and periods.start >= 1
    if prefilter and len(set(keys)) == len(keys):
        return findings
    start = 0
    while start < len(keys):
        if prefilter and keys[start] not in keys[start + periods.start : start + periods.stop]:
            start += 1
            continue
        match = _cycle_at(keys, start, periods, min_repeats)
        if match is None:
            start += 1
            continue
        period, repeats = match
        span = nodes[start : start + period * repeats]
        judged, history = split_history(span)
        if judged:
            tools = [node.tool for node in span[:period]]
            if len(set(tools)) < len(tools):  # same tool, other arguments: show them
                tools = [f"{node.tool}({_short(node.arguments)})" for node in span[:period]]
            cycle = " → ".join(tools)
            results = " and identical results" if same_outcome else ""
            findings.append(
                Finding(
                    kind="alternating_loop",
                    severity="error" if repeats >= error_from else "warning",
                    calls=judged,
                    context_calls=history,
                    message=(
                        f"The cycle {cycle} ran {repeats} times in a row with identical arguments{results} each "
                        f"time; the results will not change, so stop the loop and work with what you have, try "
                        f"a different approach, or tell the user what is missing."
                    ),
                )
            )
        start += period * repeats
    return findings


def _cycle_at(keys: list[int], start: int, periods: range, min_repeats: int) -> tuple[int, int] | None:
    """The shortest cycle starting at ``start`` that repeats at least ``min_repeats`` times."""
    for period in periods:
        if start + period * min_repeats > len(keys):
            break
        if min_repeats > 1 and keys[start + period] != keys[start]:
            continue  # not even one repetition begins: the cheap test that rules out most starts
        if len(set(keys[start : start + period])) == 1:
            continue
        length = period
        while start + length < len(keys) and keys[start + length] == keys[start + length - period]:
            length += 1
        repeats = length // period
        if repeats >= min_repeats:
            return period, repeats
    return None


def _short(arguments: object, limit: int = 60) -> str:
    text = canonical_json(arguments).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"
