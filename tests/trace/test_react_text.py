"""ReAct-style histories in text (smolagents' form, ``tracekit.trace.react_text``): read as calls and results
only when they have exactly that form; the real smolagents run is in tests/integration/test_python_clients.py."""

from __future__ import annotations

from typing import Any

from tracekit.trace import TraceBuilder
from tracekit.trace.models import Header
from tracekit.trace.react_text import react_history

CALLS = ("Calling tools:\n[{'id': 'call_1', 'type': 'function', "
         "'function': {'name': 'get_weather', 'arguments': {'city': 'Paris'}}}]")


def text(role: str, value: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": value}]}


def test_calls_and_observation_become_tool_use_and_tool_result() -> None:
    messages = [text("user", "New task:\nWeather?"), text("assistant", "Let me check.\n" + CALLS),
                text("user", "Observation:\nsunny")]  # fmt: skip
    rewritten = react_history(messages)
    assert rewritten[1]["content"] == [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    assert rewritten[2]["content"] == [{"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"}]
    builder = TraceBuilder(Header(trace_id="t"))
    builder.add_conversation(rewritten)
    assert [r.kind for r in builder.records[1:]] == ["user_message", "assistant_message", "tool_call", "tool_result"]


def test_an_error_is_an_error_result() -> None:
    messages = [text("assistant", CALLS), text("user", "Call id: call_1\nError:\nno such city\nNow let's retry")]
    (result,) = react_history(messages)[1]["content"]
    assert result["is_error"] is True and result["content"].startswith("Error:\nno such city")


def test_other_text_is_left_alone() -> None:
    for messages in (
        [text("assistant", "Calling tools:\n__import__('os').system('true')"), text("user", "Observation:\nx")],
        [text("assistant", "Calling tools:\n[{'id': 'x'}]"), text("user", "Observation:\nx")],
        [text("assistant", "I was Calling tools:\n[]"), text("user", "Observation:\nx")],
        [text("assistant", "hello"), text("user", "Observation:\nnot after calls")],
    ):
        assert react_history(messages) == messages


def test_a_system_prompt_already_recorded_is_not_recorded_again() -> None:
    """Claude Code's long prompt, sent again after a system message of its own: recorded once; a changed one is."""
    builder = TraceBuilder(Header(trace_id="t"))
    prompt = [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}]
    first = [text("user", "hi")]
    builder.add_conversation(first, prompt)
    second = [*first, text("assistant", "hello"), {"role": "system", "content": "A reminder."}, text("user", "go")]
    builder.add_conversation(second, [{"type": "text", "text": "You are Claude Code."}])
    builder.add_conversation([*second, text("assistant", "ok")], "You are someone else.")
    systems = [r.content for r in builder.records if r.kind == "system_message"]
    assert systems == [prompt, "A reminder.", "You are someone else."]
