"""Binding a transcript to a case compares its opening messages with the case's input (issue 16, item 10).

Transcripts are test inputs written here, bound with ``tracekit import anthropic-messages T.json --case ID``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from .factories import call, say
from .seed_runs import checks_of, run_case, transcript

DETAIL = {"product_id": "tb_100001", "price": 2399, "sales": 12000}
REVIEWS = {"product_id": "tb_100001", "avg_rating": 4.7, "reviews": []}


def _answer() -> list[Any]:
    return [
        call("taobao_get_product_detail", {"product_id": "tb_100001"}, DETAIL),
        call("taobao_get_product_reviews", {"product_id": "tb_100001"}, REVIEWS),
        say("价格 2399 元，评分 4.7，销量 12000。"),
    ]


def test_a_transcript_with_the_cases_history_binds_it(tmp_path: Path) -> None:
    # Seed 001 Q3-RC-03: "Pass：2 次调用完成".
    entry = run_case(tmp_path, "Q3-RC-03", transcript("Q3-RC-03", _answer()))
    assert entry["verdict"]["result"] == "pass"
    assert entry["verdict"]["history_messages"] == 5
    assert entry["problems"] == [] and "history" not in checks_of(entry)
    assert [call["history"] for call in entry["tool_calls"]] == [True, False, False]


def test_a_transcript_that_starts_with_the_question_never_loses_the_agents_calls(tmp_path: Path) -> None:
    # The example: the transcript starts with the user's question, not with the case's 4-message
    # history; the agent's two calls are its own, so "Pass：2 次调用完成".
    question = {"role": "user", "content": "这款耳机的价格、评价、销量分别是多少"}
    entry = run_case(tmp_path, "Q3-RC-03", [question, *transcript("Q3-RC-03", _answer(), with_input=False)])
    assert entry["verdict"]["result"] == "pass"
    assert entry["verdict"]["history_messages"] == 1
    assert [call["history"] for call in entry["tool_calls"]] == [False, False]
    [problem] = entry["problems"]
    assert "opens with message 4 of case Q3-RC-03's input" in problem
    history = checks_of(entry)["history"]
    assert history["result"] == "info" and history["evidence"] == problem


def test_a_differing_message_is_named_and_what_follows_is_judged(tmp_path: Path) -> None:
    messages = transcript("Q3-RC-03", _answer())
    changed = copy.deepcopy(messages)
    changed[1]["content"][0]["input"] = {"keyword": "索尼耳机"}  # the history's search, with other arguments
    entry = run_case(tmp_path, "Q3-RC-03", changed)
    [problem] = entry["problems"]
    assert "message 1 differs from case Q3-RC-03's input" in problem and "索尼耳机" in problem
    assert entry["verdict"]["history_messages"] == 1
    # The search the case did not give is judged: three calls where the seed passes two ("Fail：3 次及以上（冗余）").
    assert [call["history"] for call in entry["tool_calls"]] == [False, False, False]
    assert entry["verdict"]["result"] == "fail"
    assert checks_of(entry)["history"]["evidence"] == problem
