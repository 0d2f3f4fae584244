"""``retry_storm``: a failing call issued again and again with identical arguments."""

from __future__ import annotations

from tracekit.analyze.detectors.registry import DetectorContext, Finding, detector, split_history
from tracekit.analyze.graph import CallNode


@detector("retry_storm", failures=3)
def retry_storm(context: DetectorContext) -> list[Finding]:
    """A call (tool + arguments) that returned an error and was issued again with identical arguments,
    erroring again, until it has failed ``failures`` times (the failures need not be adjacent)."""
    threshold = int(context.options["failures"])
    failed: dict[str, list[CallNode]] = {}
    for node in context.graph:
        if node.has_result and node.is_error:
            failed.setdefault(node.key, []).append(node)
    findings = []
    for nodes in failed.values():
        if len(nodes) < threshold:
            continue
        judged, history = split_history(nodes)
        if not judged:
            continue
        first = nodes[0]
        error = first.result_text.strip().splitlines()[0][:120] if first.result_text.strip() else "an error"
        findings.append(
            Finding(
                kind="retry_storm",
                severity="error",
                calls=judged,
                context_calls=history,
                message=(
                    f"{first.tool} failed {len(nodes)} times with identical arguments ({error!r}); after an "
                    f"error, change the arguments, switch to another tool, or tell the user instead of "
                    f"retrying the same call."
                ),
            )
        )
    return findings
