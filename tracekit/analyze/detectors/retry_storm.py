"""``retry_storm``: a failing call issued again and again with identical arguments."""

from __future__ import annotations

from tracekit.analyze.detectors.registry import DetectorContext, Finding, detector, split_history
from tracekit.analyze.detectors.windows import LOOP_WINDOW_DEFAULTS, runs, windows
from tracekit.analyze.graph import CallNode


@detector("retry_storm", failures=3, consecutive=False, **LOOP_WINDOW_DEFAULTS)
def retry_storm(context: DetectorContext) -> list[Finding]:
    """A call (tool + arguments) that returned an error and was issued again with identical arguments,
    erroring again, until it has failed ``failures`` times (the failures need not be adjacent; with
    ``consecutive`` they must follow each other with no other call between). The error texts may differ.
    Window options: see ``windows.py``."""
    threshold = int(context.options["failures"])
    consecutive = bool(context.options.get("consecutive"))
    findings = []
    for window in windows(context, context.graph.nodes):
        groups = [g for run in runs(context, window) for g in _back_to_back(run)] if consecutive else _anywhere(window)
        for nodes in groups:
            if len(nodes) < threshold:
                continue
            judged, history = split_history(nodes)
            if judged:
                findings.append(_finding(nodes, judged, history, consecutive))
    return findings


def _anywhere(nodes: list[CallNode]) -> list[list[CallNode]]:
    failed: dict[str, list[CallNode]] = {}
    for node in nodes:
        if node.has_result and node.is_error:
            failed.setdefault(node.key, []).append(node)
    return list(failed.values())


def _back_to_back(nodes: list[CallNode]) -> list[list[CallNode]]:
    groups: list[list[CallNode]] = []
    current: list[CallNode] = []
    for node in nodes:
        failed = node.has_result and node.is_error
        if current and failed and node.key == current[0].key:
            current.append(node)
            continue
        if current:
            groups.append(current)
        current = [node] if failed else []
    if current:
        groups.append(current)
    return groups


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
