"""Tool inputs checked against tool schemas (jsonschema), worded as lints and scores show them."""

from __future__ import annotations

from typing import Any

import pytest

from tracekit.cases.tool_schema import check_value, property_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "keyword": {"type": "string", "minLength": 1},
        "sort": {"type": "string", "enum": ["default", "sale"]},
        "count": {"type": "integer", "minimum": 1, "maximum": 50},
        "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "price": {"type": ["number", "null"]},
        "where": {"anyOf": [{"type": "string"}, {"type": "object", "required": ["lat"]}]},
    },
    "required": ["keyword"],
    "additionalProperties": False,
}


def test_valid_input_has_no_problems() -> None:
    value = {"keyword": "键盘", "sort": "sale", "count": 10, "date": "2026-04-17", "tags": ["a"], "price": None}
    assert check_value(SCHEMA, value) == []


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({}, "missing required property 'keyword'"),
        ({"keyword": ""}, "keyword: shorter than 1 characters"),
        ({"keyword": "k", "sort": "sales_count"}, "sort: 'sales_count' is not one of ['default', 'sale']"),
        ({"keyword": "k", "count": 0}, "count: 0 is less than the minimum 1"),
        ({"keyword": "k", "count": True}, "count: expected integer, got boolean True"),
        ({"keyword": "k", "count": 2.5}, "count: expected integer, got number 2.5"),
        ({"keyword": "k", "date": "下周五"}, "date: '下周五' does not match"),
        ({"keyword": "k", "tags": ["a", 1]}, "tags[1]: expected string, got number 1"),
        ({"keyword": "k", "tags": ["a", "b", "c"]}, "tags: more than 2 items"),
        ({"keyword": "k", "where": {"lng": 1}}, "where: does not match any of anyOf"),
        ({"keyword": "k", "city": "北京"}, "city: not a parameter of this tool"),
    ],
)
def test_each_violation_is_named(value: dict[str, Any], problem: str) -> None:
    problems = check_value(SCHEMA, value)
    assert len(problems) == 1 and problems[0].startswith(problem), problems


def test_integer_valued_floats_are_integers() -> None:
    assert check_value({"type": "integer"}, 3.0) == []


def test_property_schema() -> None:
    assert property_schema(SCHEMA, "sort") == {"type": "string", "enum": ["default", "sale"]}
    assert property_schema(SCHEMA, "nope") is None
    assert property_schema({"type": "object"}, "anything") == {}
