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


def test_lists_functions_arithmetic_computed_keys_and_other_results() -> None:
    result = {"payment_methods": {"gift_card_1": {"balance": 30}}, "items": [{"item_id": "a"}, {"item_id": "b"}],
              "membership": "gold", "passengers": [{}, {}]}  # fmt: skip
    arguments = {"pid": "gift_card_1", "ids": ["a", "b"], "pay": [{"id": "certificate_1"}, {"id": "gift_card_2"}],
                 "amount": 100, "cabin": "economy"}  # fmt: skip
    holds = [
        "payment_methods[args.pid].balance >= 20",
        "all_in(args.ids, items[*].item_id) and not all_in(['a', 'c'], items[*].item_id)",
        'count(args.pay[*].id, "certificate_*") == 1 and count(args.pid, "gift_card_*") == 1',
        "args.amount == 50 * len(passengers) or args.amount == 100 * len(passengers)",
        "(1 + 2) * 2 == 6 and max(0, 1 - 3) == 0 and min(4, [2, 3]) == 2 and sum([1, 2.5]) == 3.5 and -1 < 0",
        'membership + "/" + args.cabin in ["gold/economy"]',
        'latest.get_user_details.membership == "silver"',
        "len(args.nothing[*].x) == null and args.cabin * 2 == null",  # not a list, not numbers: null
    ]
    for text in holds:
        assert parse_expression(text).evaluate(result, arguments, {"get_user_details": {"membership": "silver"}}), text
    with pytest.raises(ExpressionError, match="count\\(\\) takes 2 argument"):
        parse_expression('count(args.x) == 1')


@pytest.mark.parametrize(
    "text", ["status ==", 'status = "x"', "items[]", "items[x", "(status", 'status == "a" extra', "a.", "@"]
)
def test_what_does_not_parse_names_where(text: str) -> None:
    with pytest.raises(ExpressionError, match=r"position|expected|unexpected"):
        parse_expression(text)
