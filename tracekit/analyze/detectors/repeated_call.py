"""``repeated_call``: a call identical to an earlier call that had already returned a non-error result."""

from __future__ import annotations

from typing import Any

from tracekit.analyze.detectors.registry import DetectorContext, Finding, detector, split_history
from tracekit.analyze.detectors.windows import LOOP_WINDOW_DEFAULTS, outcome, runs, windows
from tracekit.analyze.graph import CallNode


@detector(
    "repeated_call",
    min_repeats=1,
    error_from=3,
    consecutive=False,
    same_outcome=False,
    require_success=True,
    restart_after_flag=False,
    **LOOP_WINDOW_DEFAULTS,
)
def repeated_call(context: DetectorContext) -> list[Finding]:
    """A call whose tool and canonical arguments equal those of an earlier call that had already succeeded.

    Options: ``min_repeats`` (repeats of one call before it is flagged; 1 flags the first repeat),
    ``error_from`` (repeats from which the finding is an error rather than a warning),
    ``consecutive`` (only back-to-back repeats count: another call in between ends the run),
    ``same_outcome`` (a repeat counts only when it returned what the call it repeats returned: a poll
    whose answer changed is not redundant), ``require_success`` (the repeated call must have succeeded
    before the repeat was issued; off: any identical call counts, failed or still running),
    ``restart_after_flag`` (with ``consecutive``: once a run is flagged, counting starts again from the
    next call, as Roo Code's counter does when it blocks a call), and the window options of ``windows.py``.
    """
    options = context.options
    min_repeats = int(options["min_repeats"])
    consecutive = bool(options.get("consecutive"))
    findings = []
    for window in windows(context, context.graph.nodes):
        if consecutive:
            groups = [group for run in runs(context, window) for group in _back_to_back(run, options)]
        else:
            groups = _anywhere(window, options)
        for original, repeats in groups:
            judged, _ = split_history(repeats)
            if judged and len(repeats) >= min_repeats:
                findings.append(_finding(original, repeats, options))
    return findings


def _anywhere(nodes: list[CallNode], options: dict[str, Any]) -> list[tuple[CallNode, list[CallNode]]]:
    """Repeats of a call anywhere later in the window, grouped by the call they repeat."""
    require_success, same_outcome = bool(options.get("require_success", True)), bool(options.get("same_outcome"))
    reference: dict[str, CallNode] = {}
    groups: dict[int, tuple[CallNode, list[CallNode]]] = {}
    for node in nodes:
        original = reference.get(node.key)
        if original is not None and (not require_success or original.returned_before(node)):
            if same_outcome and outcome(node) != outcome(original):
                if node.succeeded or not require_success:
                    reference[node.key] = node  # the answer changed: later repeats are compared with this one
                continue
            group = groups.get(original.index)
            if group is None:
                groups[original.index] = (original, [node])
            else:
                group[1].append(node)
        elif original is None and (node.succeeded or not require_success):
            reference[node.key] = node
    return list(groups.values())


def _back_to_back(nodes: list[CallNode], options: dict[str, Any]) -> list[tuple[CallNode, list[CallNode]]]:
    """Runs of identical calls with no other call between them: (first call, the repeats after it)."""
    require_success, same_outcome = bool(options.get("require_success", True)), bool(options.get("same_outcome"))
    restart_at = int(options["min_repeats"]) + 1 if options.get("restart_after_flag") else 0
    groups: list[tuple[CallNode, list[CallNode]]] = []
    current: list[CallNode] = []
    for node in nodes:
        if current and _continues(current[0], node, require_success, same_outcome):
            current.append(node)
            if len(current) == restart_at:
                groups.append((current[0], current[1:]))
                current = []
            continue
        if len(current) > 1:
            groups.append((current[0], current[1:]))
        current = [node] if node.succeeded or not require_success else []
    if len(current) > 1:
        groups.append((current[0], current[1:]))
    return groups


def _continues(first: CallNode, node: CallNode, require_success: bool, same_outcome: bool) -> bool:
    if node.key != first.key:
        return False
    if require_success and not first.returned_before(node):
        return False
    return not same_outcome or outcome(node) == outcome(first)


def _finding(original: CallNode, repeats: list[CallNode], options: dict[str, Any]) -> Finding:
    judged, _ = split_history(repeats)
    calls, history = split_history([original, *repeats])
    where = "in the conversation history" if original.history else f"as call #{original.index}"
    times = "once more" if len(repeats) == 1 else f"{len(repeats)} more times"
    listed = f"repeat{'s' if len(judged) > 1 else ''}: {', '.join(f'#{i}' for i in judged)}"
    same = " and got the same result" if options.get("same_outcome") else ""
    if options.get("require_success", True):
        happened = (
            f"{original.tool} was called {times} with the same arguments{same} after it had already succeeded "
            f"{where}; reuse that result instead of calling again ({listed})."
        )
    else:
        in_a_row = " in a row" if options.get("consecutive") else ""
        happened = (
            f"{original.tool} was called {len(repeats) + 1} times{in_a_row} with the same arguments{same} (first "
            f"{where}); the same call will not get a different answer, so use what it returned, change the "
            f"arguments, or try another approach ({listed})."
        )
    return Finding(
        kind="repeated_call",
        severity="error" if len(repeats) >= int(options["error_from"]) else "warning",
        calls=calls,
        context_calls=history,
        message=happened,
    )
