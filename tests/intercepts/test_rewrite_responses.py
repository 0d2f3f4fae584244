"""Intercepts rewrite the Responses API's ``function_call_output`` items exactly as they rewrite Anthropic
``tool_result`` blocks: the same conversation in both wire formats gets the same injections.

The seed configs come from test_rewrite.py (C4-LD-01, C4-LD-03, B2-FR-04); the conversations are
hand-written.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tracekit.intercepts import config_from, rewrite_request
from tracekit.providers import get_provider

from .test_rewrite import FR04, LD01, LD03, anthropic_turns, results

CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("search_flights", {"date": "下周五"}, "ok"),
    ("taobao_search_products", {"keyword": "2026款特斯拉Model Y后排遮阳帘原厂配件", "page": 1}, "real1"),
    ("maps_weather", {"city": "北京"}, "晴"),
    ("taobao_search_products", {"keyword": "Model Y遮阳帘"}, "real3"),
    ("search_flights", {"date": "2026-04-17"}, "ok2"),
]


def responses_turns(*calls: tuple[str, dict[str, Any], str]) -> dict[str, Any]:
    """The Responses request carrying the same history as ``anthropic_turns(*calls)``."""
    items: list[dict[str, Any]] = [{"role": "user", "content": "查一下"}]
    for number, (tool, tool_input, result) in enumerate(calls):
        call_id = f"toolu_{number:02d}"
        items.append({"type": "message", "role": "assistant",
                      "content": [{"type": "output_text", "text": "好的", "annotations": []}]})  # fmt: skip
        items.append({"type": "function_call", "id": f"fc_{number}", "call_id": call_id, "name": tool,
                      "arguments": json.dumps(tool_input, ensure_ascii=False)})  # fmt: skip
        items.append({"type": "function_call_output", "call_id": call_id, "output": result})
    return {"model": "gpt-x", "input": items}


def outputs(body: dict[str, Any]) -> list[Any]:
    return [item["output"] for item in body["input"] if item.get("type") == "function_call_output"]


@pytest.mark.parametrize("config", [LD01, LD03, FR04], ids=["C4-LD-01", "C4-LD-03", "B2-FR-04"])
def test_function_call_outputs_get_the_injections_tool_results_get(config: dict[str, Any]) -> None:
    intercepts = config_from(config).intercepts
    expected = rewrite_request(get_provider("anthropic"), anthropic_turns(*CALLS), intercepts)
    body = responses_turns(*CALLS)
    original = copy.deepcopy(body)
    rewrite = rewrite_request(get_provider("openai_responses"), body, intercepts)
    assert body == original, "the agent's body must not be mutated"
    assert rewrite.changed and len(rewrite.injections) == len(expected.injections)
    assert outputs(rewrite.body) == [content for content, _ in results(expected.body)]
    assert [(i.mode, i.tool, i.tool_use_id, i.original, i.injected, i.is_error) for i in rewrite.injections] == [
        (i.mode, i.tool, i.tool_use_id, i.original, i.injected, i.is_error) for i in expected.injections]
    again = rewrite_request(get_provider("openai_responses"), copy.deepcopy(body), intercepts)
    assert again.body == rewrite.body, "a re-sent history is rewritten the same way"


def test_a_continuation_knows_the_calls_of_the_items_it_does_not_repeat() -> None:
    """With ``previous_response_id`` the client sends only the new outputs; the calls are in ``prior``."""
    full = responses_turns(*CALLS[:1])["input"]
    prior, new = full[:-1], full[-1:]
    rewrite = rewrite_request(get_provider("openai_responses"), {"input": new, "previous_response_id": "resp_1"},
                              config_from(LD01).intercepts, prior=prior)  # fmt: skip
    assert outputs(rewrite.body) == ["Error: Invalid date parameter format."]
    assert rewrite.injections[0].tool == "search_flights"
    assert rewrite.injections[0].message_index == len(prior)


def test_string_input_and_untouched_requests_are_returned_as_they_are() -> None:
    intercepts = config_from(LD01).intercepts
    body = {"model": "gpt-x", "input": "查一下航班"}
    assert rewrite_request(get_provider("openai_responses"), body, intercepts).body is body
    untouched = responses_turns(("web_search", {"q": "x"}, "found"))
    rewrite = rewrite_request(get_provider("openai_responses"), untouched, intercepts)
    assert rewrite.body is untouched and not rewrite.changed
