"""Helpers for the ported peer scenarios (test_peer_*.py): transcripts of steps, and tracekit's stuck answer.

The transcripts are test inputs written here, translated from each peer's published test scenarios (the
peer's events become tool calls, agent messages and user messages); they are not any producer's output.

A peer answers "is the agent stuck now?" after each step; tracekit reports every loop of a finished
trace. So a ported scenario cut at one of the peer's checkpoints is "stuck now" for tracekit when a loop
finding takes in the last step the preset looks at (user messages count as steps only for a preset whose
windows reset on them), and "stuck" at all when there is any loop finding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracekit.analyze.config import detector_options
from tracekit.analyze.detectors import DetectorContext, Finding, run_detectors
from tracekit.analyze.graph import build_graph
from tracekit.trace import Trace

from .factories import Turn, build_trace, messages_of

LOOP_KINDS = ("repeated_call", "retry_storm", "alternating_loop", "repeated_text")

Step = Turn | dict[str, Any]


def agent(text: str) -> dict[str, Any]:
    """An agent message without a tool call."""
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def thinking(text: str) -> dict[str, Any]:
    """An agent turn holding only a thinking block (a model "thought" event)."""
    return {"role": "assistant", "content": [{"type": "thinking", "thinking": text, "signature": ""}]}


def transcript(steps: Sequence[Step]) -> Trace:
    """A trace of these steps (no case, no history)."""
    return build_trace(messages_of(list(steps)))


def options_of(preset: str | None, overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """The resolved detector options of a preset, with individual options over it."""
    resolved = detector_options(preset=preset)
    for kind, values in (overrides or {}).items():
        resolved[kind] = {**resolved[kind], **values}
    return resolved


def loop_findings(
    trace: Trace, preset: str | None, overrides: dict[str, dict[str, Any]] | None = None
) -> list[Finding]:
    """The loop findings of a trace under a preset."""
    context = DetectorContext(build_graph(trace.calls()), trace)
    return [f for f in run_detectors(context, options_of(preset, overrides)) if f.kind in LOOP_KINDS]


def stuck(steps: Sequence[Step], preset: str | None, overrides: dict[str, dict[str, Any]] | None = None) -> bool:
    """Whether tracekit finds any loop in the transcript."""
    return bool(loop_findings(transcript(steps), preset, overrides))


def stuck_now(steps: Sequence[Step], preset: str | None, overrides: dict[str, dict[str, Any]] | None = None) -> bool:
    """Whether a loop finding takes in the transcript's last step (see the module docstring)."""
    trace = transcript(steps)
    options = options_of(preset, overrides)
    findings = loop_findings(trace, preset, overrides)
    context = DetectorContext(build_graph(trace.calls()), trace)
    events = [(call.message_index, "call", call.index) for call in trace.kind("tool_call")]
    events += [(turn, "message", turn) for turn in context.agent_text_turns]
    if any(options[kind]["enabled"] and options[kind].get("reset_on_user_message") for kind in LOOP_KINDS):
        events += [(turn, "user", turn) for turn in context.user_turns]
    if not events:
        return False
    _, what, index = max(events)
    if what == "call":
        return any(index in finding.calls for finding in findings)
    if what == "message":
        return any(index in finding.messages for finding in findings)
    return False
