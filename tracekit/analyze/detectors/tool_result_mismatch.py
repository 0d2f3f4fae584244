"""``tool_result_mismatch``: what the model was told a tool returned differs from what the tool server returned.

Needs the tool side in the trace (``tracekit mcp record``, joined with ``tracekit mcp join``): each ``tools/call``
exchange names the model's call it answered. The model's ``tool_result`` should carry the server's text; an
agent that truncates, rewrites or drops it (or a model-side intercept that replaced it) shows here. Text is
compared as text: every text block the server returned must occur in what the model was told (agents wrap
results in their own framing, JSON or not); a server error the model saw as a success counts too.
"""

from __future__ import annotations

from tracekit.analyze.detectors.registry import DetectorContext, Finding, detector
from tracekit.trace.view import content_text


@detector("tool_result_mismatch", check_errors=True)
def tool_result_mismatch(context: DetectorContext) -> list[Finding]:
    """A judged call whose model-side result lacks a text block of the tool server's result (or, with
    ``check_errors``, hides the server's ``isError``). Options: ``check_errors``."""
    trace = context.trace
    exchanges = trace.kind("mcp_exchange") if trace is not None else []
    if trace is None or not exchanges:  # (most traces: no tool side, and no call to pair)
        return []
    calls = {call.index: call for call in trace.calls(context.history_messages)}
    findings = []
    for exchange in exchanges:
        call = calls.get(exchange.call_index) if exchange.method == "tools/call" else None
        if call is None or call.history or call.result is None or not isinstance(exchange.result, dict):
            continue
        told = call.result_text
        blocks = exchange.result.get("content")
        texts = [str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"] \
            if isinstance(blocks, list) else []  # fmt: skip
        missing = [text for text in texts if text and text not in told]
        hidden_error = bool(context.options.get("check_errors")) and bool(exchange.result.get("isError")) \
            and not call.is_error and not any(text in told for text in texts)  # fmt: skip
        if not missing and not hidden_error:
            continue
        returned = content_text(blocks) if isinstance(blocks, list) else ""
        findings.append(Finding(
            "tool_result_mismatch", "warning", [call.index],
            f"call {call.index} ({call.name}): the model was told {_short(told)!r} but the tool server returned "
            f"{_short(returned)!r}{' (an error)' if exchange.result.get('isError') else ''}; check what the agent "
            "does with tool results before the model sees them",
        ))  # fmt: skip
    return findings


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
