"""Argument matchers: each one, including the missing-argument cases."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from tracekit.analyze.graph import build_graph
from tracekit.analyze.matchers import MISSING, MatchContext, argument_value, match_argument
from tracekit.cases import ArgMatcher

from .factories import build_trace, call, messages_of, user


def ok(matcher: dict[str, Any], value: Any, **context: Any) -> bool:
    return match_argument(ArgMatcher.model_validate(matcher), value, MatchContext(**context))[0]


@pytest.mark.parametrize(
    ("matcher", "good", "bad"),
    [
        ({"exact": "北京"}, " 北京", "北京市"),
        ({"exact": 110000}, "110000", 110001),
        ({"subset": {"a": 1}}, {"a": 1, "b": 2}, {"b": 2}),
        ({"subset": [1, 2]}, [2, 3, 1], [1]),
        ({"one_of": ["sale", "sales"]}, "sale", "price"),
        ({"range": {"min": 400, "max": 590}}, "500", 600),
        ({"regex": "^北京(市)?$"}, "北京市", "南京"),
        ({"contains": "朝阳"}, "朝阳区", "海淀区"),
        ({"enum": ["a", "b"]}, "a", "c"),
        ({"present": True}, "x", ""),
        ({"any_of": [{"exact": 1}, {"present": False}]}, MISSING, 2),
    ],
)
def test_matcher(matcher: dict[str, Any], good: Any, bad: Any) -> None:
    assert ok(matcher, good)
    assert not ok(matcher, bad)


def test_missing_argument_fails_every_matcher_but_present_false() -> None:
    assert not ok({"exact": "x"}, MISSING)
    assert not ok({"regex": ".*"}, MISSING)
    assert ok({"present": False}, MISSING)


def test_enum_from_the_tool_schema() -> None:
    schema = {"type": "string", "enum": ["default", "sale", "price_asc"]}
    assert ok({"enum": True}, "sale", param_schema=schema)
    assert not ok({"enum": True}, "sales_count", param_schema=schema)
    assert not ok({"enum": True}, "sale", param_schema={"type": "string"})


def test_relative_date_against_context_now() -> None:
    now = dt.date(2026, 4, 7)  # a Tuesday; 下周五 is 2026-04-17
    assert ok({"relative_date": "下周五"}, "2026-04-17", now=now)
    assert not ok({"relative_date": "下周五"}, "2026-04-10", now=now)
    assert ok({"relative_date": "下周"}, "2026-04-14", now=now)
    assert ok({"relative_date": "明天"}, "2026/04/08", now=now)
    assert not ok({"relative_date": "明天"}, "明天", now=now)
    assert not ok({"relative_date": "明天"}, "2026-04-08")  # no context.now to resolve from


def test_from_output_takes_values_of_an_earlier_result_by_path() -> None:
    trace = build_trace(
        messages_of(
            [
                user("x"),
                call(
                    "taobao_search_products",
                    {"keyword": "耳机"},
                    {"items": [{"product_id": "p1"}, {"product_id": "p2"}]},
                ),
                call("taobao_get_product_detail", {"product_id": "p2"}),
            ]
        )
    )
    nodes = build_graph(trace.calls()).nodes
    reference = {"from_output": {"tool": "taobao_search_products", "path": "items[].product_id"}}
    assert ok(reference, "p2", earlier=nodes[:1])
    assert not ok(reference, "p9", earlier=nodes[:1])
    assert not ok(reference, "p2", earlier=[])
    second = {"from_output": {"tool": "taobao_search_products", "path": "items[1].product_id"}}
    assert ok(second, "p2", earlier=nodes[:1]) and not ok(second, "p1", earlier=nodes[:1])


def test_argument_value_by_key_or_path() -> None:
    assert argument_value({"a": {"b": 1}}, "a.b") == 1
    assert argument_value({"a.b": 2}, "a.b") == 2
    assert argument_value({"a": 1}, "c") is MISSING
