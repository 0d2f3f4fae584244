"""Intercepts applied to request bodies: the seeds' configs (C4-LD-01, C4-LD-03, C4-PA-01, C4-AR-03,
B2-FR-04), statelessness, and both wire formats.

The configs below are copied from the seeds' JSON (004_24efcd20298eeeaa.txt, 000_649a87b897009fb0.txt),
trimmed to the fields that matter; the conversations are hand-written.
"""

from __future__ import annotations

import copy
import json

import pytest

from tracekit.errors import CaseError
from tracekit.intercepts import SeenCall, ToolMock, config_from, rewrite_request
from tracekit.providers import get_provider

LD01 = {
    "type": "tool_intercept",
    "intercept_tool": "search_flights",
    "inject_tool_result": {"is_error": True, "content": "Error: Invalid date parameter format."},
}
AR03 = {
    "type": "tool_intercept",
    "intercept_tools": ["beike_lookup_city_id", "maps_text_search"],
    "inject_tool_result": {"is_error": True, "content": "Error: Service temporarily unavailable (HTTP 503)."},
}
LD03 = {
    "type": "tool_mock",
    "mocked_calls": [
        {"tool": "taobao_search_products", "params_match": {"keyword": "2026款特斯拉Model Y后排遮阳帘原厂配件"},
         "inject_result": {"is_error": False, "content": '{"total": 0, "products": []}'}},
        {"tool": "taobao_search_products", "params_match": {"keyword": "Model Y遮阳帘"},
         "inject_result": {"is_error": False, "content": '{"total": 3}'}},
    ],
}  # fmt: skip
FR04 = {
    "type": "tool_mock",
    "mocked_calls": [
        {"tool": "search_flights", "inject_result": {"is_error": False, "content": '{"flights": ["MU5707"]}'}},
        {"tool": "maps_weather", "inject_result": {"is_error": True, "content": "Error: outside coverage"}},
    ],
}


def anthropic_turns(*calls: tuple[str, dict, str]) -> dict:
    """A request whose history holds one tool_use + tool_result pair per (tool, input, result)."""
    messages: list[dict] = [{"role": "user", "content": "查一下"}]
    for number, (tool, tool_input, result) in enumerate(calls):
        tool_id = f"toolu_{number:02d}"
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": "好的"},
            {"type": "tool_use", "id": tool_id, "name": tool, "input": tool_input}]})  # fmt: skip
        result_block = {"type": "tool_result", "tool_use_id": tool_id, "content": result}
        messages.append({"role": "user", "content": [result_block]})
    return {"model": "claude-x", "max_tokens": 100, "messages": messages}


def results(body: dict) -> list[tuple[object, bool]]:
    return [
        (block["content"], bool(block.get("is_error")))
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


def test_tool_intercept_replaces_every_result_of_the_tool_and_leaves_others() -> None:
    body = anthropic_turns(("search_flights", {"date": "下周五"}, "ok"), ("web_search", {"q": "x"}, "found"),
                           ("search_flights", {"date": "2026-04-17"}, "ok2"))  # fmt: skip
    original = copy.deepcopy(body)
    rewrite = rewrite_request(get_provider("anthropic"), body, config_from(LD01).intercepts)
    assert body == original, "the agent's body must not be mutated"
    assert results(rewrite.body) == [
        ("Error: Invalid date parameter format.", True),
        ("found", False),
        ("Error: Invalid date parameter format.", True),
    ]
    assert [(i.tool, i.tool_use_id, i.original, i.is_error) for i in rewrite.injections] == [
        ("search_flights", "toolu_00", "ok", True),
        ("search_flights", "toolu_02", "ok2", True),
    ]


def test_intercept_tools_covers_each_listed_tool() -> None:
    body = anthropic_turns(("beike_lookup_city_id", {"city": "北京"}, "110000"), ("maps_text_search", {}, "[]"),
                           ("web_search", {}, "r"))  # fmt: skip
    rewrite = rewrite_request(get_provider("anthropic"), body, config_from(AR03).intercepts)
    assert [flag for _, flag in results(rewrite.body)] == [True, True, False]


def test_params_match_picks_the_mock_whose_values_the_input_contains() -> None:
    body = anthropic_turns(
        ("taobao_search_products", {"keyword": "2026款特斯拉Model Y后排遮阳帘原厂配件", "page": 1}, "real1"),
        ("taobao_search_products", {"keyword": "特斯拉遮阳帘"}, "real2"),
        ("taobao_search_products", {"keyword": "Model Y遮阳帘"}, "real3"),
    )
    rewrite = rewrite_request(get_provider("anthropic"), body, config_from(LD03).intercepts)
    contents = [content for content, _ in results(rewrite.body)]
    assert contents == ['{"total": 0, "products": []}', "real2", '{"total": 3}']


def test_mock_without_params_match_answers_the_tools_calls_in_order_the_last_repeating() -> None:
    mock = ToolMock.from_config({"type": "tool_mock", "mocked_calls": [
        {"tool": "t", "inject_result": {"content": "first"}},
        {"tool": "t", "inject_result": {"content": "second"}}]})  # fmt: skip
    answers = [mock.replacement_for(SeenCall("t", {}, None, tuple([{}] * k))) for k in range(4)]
    assert [a.content for a in answers if a] == ["first", "second", "second", "second"]
    assert mock.replacement_for(SeenCall("other", {})) is None


def test_identical_params_match_mocks_apply_in_order() -> None:
    mock = ToolMock.from_config({"type": "tool_mock", "mocked_calls": [
        {"tool": "t", "params_match": {"k": 1}, "inject_result": {"content": "empty", "is_error": False}},
        {"tool": "t", "params_match": {"k": 1}, "inject_result": {"content": "full"}}]})  # fmt: skip
    first = mock.replacement_for(SeenCall("t", {"k": 1}, None, ({"k": 2},)))
    second = mock.replacement_for(SeenCall("t", {"k": 1}, None, ({"k": 2}, {"k": 1})))
    assert (first and first.content, second and second.content) == ("empty", "full")


def test_a_resent_history_is_rewritten_the_same_way_every_time() -> None:
    intercepts = config_from([FR04, LD01]).intercepts
    turn1 = anthropic_turns(("search_flights", {"to": "DPS"}, "real flights"))
    turn2 = anthropic_turns(
        ("search_flights", {"to": "DPS"}, "real flights"), ("maps_weather", {"city": "Bali"}, "sunny")
    )
    first = rewrite_request(get_provider("anthropic"), turn1, intercepts).body
    second = rewrite_request(get_provider("anthropic"), turn2, intercepts).body
    assert second["messages"][: len(first["messages"])] == first["messages"]
    # FR04 comes first in the list, so its mock (not LD01's error) answers search_flights.
    assert results(second) == [('{"flights": ["MU5707"]}', False), ("Error: outside coverage", True)]


def test_thread_continuation_finds_calls_in_prior_messages_and_only_rewrites_new_ones() -> None:
    full = anthropic_turns(("search_flights", {"a": 1}, "r1"), ("search_flights", {"a": 2}, "r2"))
    prior, new = full["messages"][:3], full["messages"][3:]
    rewrite = rewrite_request(get_provider("anthropic"), {"messages": new}, config_from(LD01).intercepts, prior=prior)
    assert len(rewrite.body["messages"]) == 2
    assert results(rewrite.body) == [("Error: Invalid date parameter format.", True)]
    assert rewrite.injections[0].message_index == 4


def test_openai_tool_messages_are_rewritten_by_the_tool_call_they_answer() -> None:
    body = {"model": "gpt-x", "messages": [
        {"role": "user", "content": "查一下"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "search_flights", "arguments": '{"date": "x"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "web_search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        {"role": "tool", "tool_call_id": "call_2", "content": "found"}]}  # fmt: skip
    rewrite = rewrite_request(get_provider("openai"), body, config_from(LD01).intercepts)
    contents = [m.get("content") for m in rewrite.body["messages"][2:]]
    assert contents == ["Error: Invalid date parameter format.", "found"]
    assert rewrite.injections[0].is_error is True
    assert rewrite.injections[0].original == "ok"


def test_no_intercepts_returns_the_same_body_object() -> None:
    body = anthropic_turns(("search_flights", {}, "ok"))
    assert rewrite_request(get_provider("anthropic"), body, []).body is body
    assert rewrite_request(get_provider("anthropic"), body, config_from(AR03).intercepts).body is body


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"type": "tool_intercept", "inject_tool_result": {"content": "x"}}, "intercept_tool"),
        ({"type": "tool_mock", "mocked_calls": []}, "mocked_calls"),
        ({"type": "tool_mock", "mocked_calls": [{"tool": "t"}]}, "mocked_calls[0].inject_result"),
        ({"type": "nope"}, "type"),
    ],
)
def test_bad_configs_name_the_field(config: dict, field: str) -> None:
    with pytest.raises(CaseError, match=field.replace("[", r"\[").replace("]", r"\]")):
        config_from(config)


def test_seed_json_text_loads_as_is() -> None:
    text = json.dumps(LD03, ensure_ascii=False)
    config = config_from(json.loads(text))
    assert len(config.intercepts) == 1 and not config.faults
