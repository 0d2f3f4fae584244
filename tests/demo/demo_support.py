"""Helpers of the demo's judge tests: traces of a case run, built in code (nothing recorded from a model).

Each trace is the case's input messages (the injected history, as the case file has it) followed by the
agent turns a test writes, written with ``TraceBuilder`` and read back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracekit.cases import Case, load_case
from tracekit.trace import Header, Trace, TraceBuilder, load_trace, write_trace

CASES = Path(__file__).resolve().parents[2] / "cases"


def case(case_id: str) -> Case:
    """A case of the library, by id."""
    folder = {"Q1": "q1", "C4": "c4", "B2": "b2", "Q3": "q3"}[case_id[:2]]
    return load_case(CASES / folder / f"{case_id}.yaml")


def run_trace(tmp_path: Path, run_case: Case, agent: list[dict[str, Any]], name: str = "run") -> Trace:
    """A trace of ``run_case`` whose agent turns (after the case input) are ``agent``, written and read back."""
    messages = list(run_case.input.messages)
    if run_case.input.user is not None:
        messages.append({"role": "user", "content": run_case.input.user})
    builder = TraceBuilder(Header(trace_id=name, case_id=run_case.id, source="test:built"))
    builder.add_conversation(messages + agent)
    return load_trace(write_trace(tmp_path / f"{name}.jsonl", builder.records))


def answer(text: str) -> dict[str, Any]:
    """An assistant turn with text only."""
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def tool_turn(
    call_id: str, name: str, arguments: dict[str, Any], result: str, is_error: bool = False
) -> list[dict[str, Any]]:
    """An assistant tool_use turn and the user turn carrying its result."""
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result,
                                      "is_error": is_error}]},
    ]
