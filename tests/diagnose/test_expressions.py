"""The policy file's expression language: what holds, what does not, and what does not parse."""

from __future__ import annotations

import pytest

from tracekit.diagnose.expressions import parse_expression
from tracekit.errors import ExpressionError

RESULT = {"status": "pending", "total": 12.5, "items": [{"id": "a"}, {"id": "b"}], "tags": ["x"], "note": None}


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ('status == "pending"', True),
        ("status == 'delivered'", False),
        ('status in ["pending", "processed"]', True),
        ('status not in ["pending"]', False),
        ("total >= 12 and total < 13", True),
        ('not status == "pending"', False),
        ('status == "x" or items[1].id == "b"', True),
        ("len(items) == 2", True),
        ("len(missing) == 0", False),  # a missing field is null; len(null) is null
        ("missing == null and note == null", True),
        ('total > "a"', False),  # different types: false, not an error
        ('"x" in tags', True),
        ("args.n <= 5", True),
        ("items[-1].id == 'b' and items[5].id == null", True),
    ],
)
def test_expressions_hold_or_not(text: str, holds: bool) -> None:
    assert parse_expression(text).evaluate(RESULT, {"n": 5}) is holds


@pytest.mark.parametrize("text", ["status ==", 'status = "x"', "items[x]", "(status", 'status == "a" extra', "a.", "@"])
def test_what_does_not_parse_names_where(text: str) -> None:
    with pytest.raises(ExpressionError, match=r"position|expected|unexpected"):
        parse_expression(text)
