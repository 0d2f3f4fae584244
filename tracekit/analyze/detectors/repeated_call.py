"""``repeated_call``: a call identical to an earlier call that had already returned a non-error result."""

from __future__ import annotations

from tracekit.analyze.detectors.registry import DetectorContext, Finding, detector, split_history
from tracekit.analyze.graph import CallNode


@detector("repeated_call", min_repeats=1, error_from=3)
def repeated_call(context: DetectorContext) -> list[Finding]:
    """A call whose tool and canonical arguments equal those of an earlier call that had already succeeded.

    Options: ``min_repeats`` (repeats of one call before it is flagged; 1 flags the first repeat),
    ``error_from`` (repeats from which the finding is an error rather than a warning).
    """
    min_repeats = int(context.options["min_repeats"])
    error_from = int(context.options["error_from"])
    first_success: dict[str, CallNode] = {}
    repeats: dict[str, list[CallNode]] = {}
    for node in context.graph.nodes:
        original = first_success.get(node.key)
        if original is not None and original.returned_before(node):
            later = repeats.get(node.key)
            if later is None:
                repeats[node.key] = [node]
            else:
                later.append(node)
        elif original is None and node.has_result and not node.is_error:  # node.succeeded
            first_success[node.key] = node
    findings = []
    for key, nodes in repeats.items():
        judged, _ = split_history(nodes)
        if not judged or len(nodes) < min_repeats:
            continue
        original = first_success[key]
        pattern = [original, *nodes]
        calls, history = split_history(pattern)
        where = "in the conversation history" if original.history else f"as call #{original.index}"
        times = "once more" if len(nodes) == 1 else f"{len(nodes)} more times"
        findings.append(
            Finding(
                kind="repeated_call",
                severity="error" if len(nodes) >= error_from else "warning",
                calls=calls,
                context_calls=history,
                message=(
                    f"{original.tool} was called {times} with the same arguments after it had already "
                    f"succeeded {where}; reuse that result instead of calling again "
                    f"(repeat{'s' if len(judged) > 1 else ''}: {', '.join(f'#{i}' for i in judged)})."
                ),
            )
        )
    return findings
