"""A Responses API agent that sends earlier output items back as ``item_reference`` (as the Vercel AI SDK's
``@ai-sdk/openai`` does for a stored response's messages) is one session, read as the items it names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai

from tracekit.proxy.item_references import OutputItems

from .helpers import of_kind, recording, replaying, trace_records
from .test_responses_record_replay import FINAL, TOOLS, assert_weather_session, call_outputs, weather_script


def referencing_loop(client: openai.OpenAI) -> list[dict[str, Any]]:
    """The whole history each turn, messages and reasoning as references, function calls as items."""
    items: list[Any] = [{"role": "user", "content": "北京、上海、广州天气怎么样？"}]
    results = []
    for _ in range(5):
        response = client.responses.create(model="gpt-test", input=items, tools=TOOLS)
        results.append(response.to_dict(mode="json", exclude_none=True))
        outputs = call_outputs(response.output)
        if not outputs:
            return results
        for item in response.output:
            if item.type in ("message", "reasoning"):
                items.append({"type": "item_reference", "id": item.id})
            elif item.type == "function_call":
                items.append({"type": "function_call", "call_id": item.call_id, "name": item.name,
                              "arguments": item.arguments})  # fmt: skip
        items += outputs
    return results


def test_item_references_stitch_one_session_and_replay(tmp_path: Path) -> None:
    with recording(weather_script(), tmp_path) as (_, proxy):
        recorded = referencing_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k"))
    (records,) = trace_records(tmp_path)
    assert_weather_session(records)
    assert [c["stitched"] for c in of_kind(records, "model_call")] == ["new", "continuity", "continuity"]
    assert "item_reference" in str(of_kind(records, "model_call")[1]["request"]), "recorded as sent"
    assert "item_reference" not in str(of_kind(records, "user_message")), "never read as a user message"
    with replaying(tmp_path) as proxy:
        assert referencing_loop(openai.OpenAI(base_url=proxy.url + "/v1", api_key="k")) == recorded
    assert recorded[-1]["output"][0]["content"][0]["text"] == FINAL


def test_an_unknown_reference_is_left_as_it_is_and_the_oldest_items_are_forgotten() -> None:
    items = OutputItems(limit=2)
    items.learn({"output": [{"id": "a", "type": "message"}, {"id": "b", "type": "message"}, {"id": "c"}]})
    body = {"input": [{"type": "item_reference", "id": "a"}, {"type": "item_reference", "id": "c"}]}
    assert items.resolve(body)["input"] == [{"type": "item_reference", "id": "a"}, {"id": "c"}]
    assert items.resolve({"input": "hi"}) == {"input": "hi"}
