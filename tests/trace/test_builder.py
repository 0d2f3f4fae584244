"""TraceBuilder derives each message's records once, however often the history is re-sent."""

from __future__ import annotations

from tracekit.trace import Header, ModelCall, ToolCall, ToolResult, TraceBuilder, UserMessage


def tool_use(call_id: str, name: str, arguments: dict) -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def tool_result(call_id: str, text: str, is_error: bool = False) -> dict:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}


def test_resent_history_is_recorded_once() -> None:
    builder = TraceBuilder(Header(trace_id="t"))
    user = {"role": "user", "content": "查北京天气"}
    reply = {"role": "assistant", "content": [tool_use("a", "maps_weather", {"city": "北京"})]}
    builder.add_conversation([user])
    builder.add_model_call(ModelCall(index=-1, provider="anthropic"), reply)
    # The SDK echoes the reply back with an extra null field; it is still the same message.
    echoed = {"role": "assistant", "content": [{**reply["content"][0], "caller": None}]}
    builder.add_conversation([user, echoed, {"role": "user", "content": [tool_result("a", "晴")]}])
    builder.add_conversation([user, echoed, {"role": "user", "content": [tool_result("a", "晴")]}])
    kinds = [type(r).__name__ for r in builder.records]
    assert kinds == ["Header", "UserMessage", "ModelCall", "AssistantMessage", "ToolCall", "ToolResult"]


def test_results_pair_by_position_when_ids_repeat() -> None:
    builder = TraceBuilder(Header(trace_id="t"))
    builder.add_conversation([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [tool_use("dup", "a", {}), tool_use("dup", "b", {})]},
        {"role": "user", "content": [tool_result("dup", "ra"), tool_result("dup", "Error: rb", True)]},
    ])
    results = [r for r in builder.records if isinstance(r, ToolResult)]
    calls = [r for r in builder.records if isinstance(r, ToolCall)]
    assert [(r.call_index, r.name, r.is_error) for r in results] == [(0, "a", False), (1, "b", True)]
    assert [c.message_index for c in calls] == [1, 1]


def test_rewritten_history_is_recorded_again_at_its_position() -> None:
    builder = TraceBuilder(Header(trace_id="t"))
    builder.add_conversation([{"role": "user", "content": "one"}, {"role": "assistant", "content": "A"}])
    new = builder.add_conversation([{"role": "user", "content": "one"}, {"role": "assistant", "content": "B"}])
    assert [type(r).__name__ for r in new] == ["AssistantMessage"]
    assert new[0].message_index == 1


def test_injected_results_are_marked_and_text_blocks_kept() -> None:
    builder = TraceBuilder(Header(trace_id="t"))
    builder.add_conversation([
        {"role": "assistant", "content": [tool_use("x", "search", {"q": 1})]},
        {"role": "user", "content": [tool_result("x", "Error: timeout", True), {"type": "text", "text": "继续"}]},
    ])
    result = next(r for r in builder.records if isinstance(r, ToolResult))
    user = next(r for r in builder.records if isinstance(r, UserMessage))
    assert result.injected is False
    assert user.content == [{"type": "text", "text": "继续"}]
    builder2 = TraceBuilder(Header(trace_id="t2"))
    builder2.add_conversation(
        [{"role": "assistant", "content": [tool_use("x", "search", {})]},
         {"role": "user", "content": [tool_result("x", "boom", True)]}],
        injected={"x"},
    )
    assert next(r for r in builder2.records if isinstance(r, ToolResult)).injected is True


def test_odd_field_types_are_kept_as_text_not_raised() -> None:
    builder = TraceBuilder(Header(trace_id="t"))
    builder.add_conversation(
        [
            {"role": "user", "content": 5},
            {"role": "assistant", "content": [{"type": "tool_use", "id": 5, "name": ["x"], "input": {}}, "bare"]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": [], "content": {"a": 1}}]},
            "not a message",
        ],
        system=True,  # type: ignore[arg-type]
    )
    kinds = [type(r).__name__ for r in builder.records]
    assert kinds == ["Header", "SystemMessage", "UserMessage", "AssistantMessage", "ToolCall", "ToolResult",
                     "UserMessage"]
    call = next(r for r in builder.records if isinstance(r, ToolCall))
    assert (call.id, call.name) == ("5", '["x"]')
    result = next(r for r in builder.records if isinstance(r, ToolResult))
    assert result.content == '{"a":1}' and result.call_index == 0
