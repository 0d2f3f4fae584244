"""The scripted policies: a plan for every case, derivation of arguments, the dialogue view of requests."""

from __future__ import annotations

import re

import pytest
from tracekit_demo.policies import POLICIES, Dialogue, plan_for
from tracekit_demo.policies.derive import derive_value, reference_plan, regex_example
from tracekit_demo.policies.steps import Call, DateOf, Ref, Say, render

from tracekit.cases import ArgMatcher, CaseLibrary
from tracekit.testing import FakeRequest, MessageReply, ToolUse


@pytest.mark.parametrize("policy", POLICIES)
def test_every_case_has_a_plan(library: CaseLibrary, policy: str) -> None:
    for case in library:
        plan = plan_for(policy, case, library.catalog)
        assert plan.steps, case.id
        assert isinstance(plan.steps[-1], Say) or callable(plan.steps[-1]), case.id
        if policy == "flawed":
            assert plan.failure and plan.note, case.id


@pytest.mark.parametrize("pattern", [r"^北京(市)?$", r"(?i)^\s*airpods\s*pro\s*2\s*$", r"(?i)iphone\s*16",
                                     r"(?i)(索尼|sony).*1000\s*xm5|wh-?1000xm5", r"4550000|455(\.0+)?\s*万"])
def test_regex_examples_match_their_pattern(pattern: str) -> None:
    example = regex_example(pattern)
    assert example is not None and re.search(pattern, example)


def test_matchers_become_values() -> None:
    assert derive_value(ArgMatcher(range={"min": 400, "max": 590}), None) == 495
    assert derive_value(ArgMatcher(relative_date="下周五"), None) == DateOf("下周五")
    assert derive_value(ArgMatcher(from_output={"tool": "t", "path": "items[].id"}), None) == Ref("t", "items[].id")
    assert derive_value(ArgMatcher(enum=True), {"enum": ["sale", "price"]}) == "sale"
    assert derive_value(ArgMatcher(any_of=[{"regex": "(?=x)y"}, {"exact": 1}]), None) == 1


def test_derived_plan_follows_expect(library: CaseLibrary) -> None:
    plan = reference_plan(library.get("B2-PC-03"), library.catalog)
    first, second = plan.steps[0], plan.steps[1]
    assert isinstance(first, Call) and first.tool == "beike_lookup_city_id"
    assert isinstance(second, Call) and second.args["city_id"] == Ref("beike_lookup_city_id", "city_id")


def request(provider: str, messages: list[dict[str, object]]) -> FakeRequest:
    return FakeRequest(0, "POST", "/", {}, {"messages": messages}, b"", provider,  # type: ignore[arg-type]
                       messages=messages)


def test_dialogue_reads_both_wire_formats(library: CaseLibrary) -> None:
    case = library.get("B2-PC-03")
    anthropic = request("anthropic", [
        {"role": "user", "content": case.input.user},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "beike_lookup_city_id",
                                           "input": {"city_name": "北京"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": '{"city_id": 110000}'}]},
    ])
    openai = request("openai", [
        {"role": "system", "content": "s"}, {"role": "user", "content": case.input.user},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "beike_lookup_city_id",
                                                         "arguments": '{"city_name": "北京"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"city_id": 110000}'},
    ])
    for fake in (anthropic, openai):
        dialogue = Dialogue(case, fake)
        assert dialogue.step == 1 and dialogue.value("beike_lookup_city_id", "city_id") == 110000
        reply = render(Call("beike_search_resale_housing", {"city_id": Ref("beike_lookup_city_id", "city_id")}),
                       dialogue)
        assert isinstance(reply, MessageReply)
        assert reply.content == (ToolUse("beike_search_resale_housing", {"city_id": 110000}),)
        assert reply.usage is not None and reply.usage.output_tokens


def test_texts_quote_results_and_count_tokens(library: CaseLibrary) -> None:
    case = library.get("B2-TS-01")
    fake = request("anthropic", [
        {"role": "user", "content": case.input.user},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "search_flights", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": '{"flights": [{"flight_no": "CA1405"}]}'}]},
    ])
    reply = render(Say("最早的航班是 {search_flights:flights[0].flight_no}。"), Dialogue(case, fake))
    assert isinstance(reply, MessageReply)
    assert reply.content[0].text == "最早的航班是 CA1405。"  # type: ignore[union-attr]
    assert reply.usage is not None and 5 <= (reply.usage.output_tokens or 0) <= 20
