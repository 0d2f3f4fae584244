"""``alternating_loop``: a short cycle of calls (A B, A B C) repeated back to back, identically."""

from __future__ import annotations

from tracekit.analyze.detectors.registry import DetectorContext, Finding, detector, split_history


@detector("alternating_loop", min_period=2, max_period=4, min_repeats=2, error_from=3)
def alternating_loop(context: DetectorContext) -> list[Finding]:
    """A cycle of 2-4 calls, not all identical, repeated back to back with the same tool and arguments
    position by position. Calls of the same tools with different arguments (paging, iterating over
    results) never match.

    Options: ``min_period`` / ``max_period`` (cycle lengths), ``min_repeats`` (repetitions of the cycle
    to flag), ``error_from`` (repetitions from which the finding is an error).
    """
    options = context.options
    periods = range(int(options["min_period"]), int(options["max_period"]) + 1)
    min_repeats, error_from = int(options["min_repeats"]), int(options["error_from"])
    nodes = context.graph.nodes
    numbers: dict[str, int] = {}
    keys = [numbers.setdefault(node.key, len(numbers)) for node in nodes]  # small ints compare fastest
    findings: list[Finding] = []
    # A cycle repeats only if some call's key comes back within max_period calls; the tests below skip
    # the traces and starts where none does, which are most of them.
    prefilter = min_repeats > 1 and periods.start >= 1
    if prefilter and len(numbers) == len(keys):
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
            findings.append(
                Finding(
                    kind="alternating_loop",
                    severity="error" if repeats >= error_from else "warning",
                    calls=judged,
                    context_calls=history,
                    message=(
                        f"The cycle {cycle} ran {repeats} times in a row with identical arguments each time; "
                        f"the results will not change, so stop the loop and work with what you have, try "
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
    from tracekit.trace.canonical import canonical_json

    text = canonical_json(arguments).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"
