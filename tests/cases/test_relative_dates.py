"""Relative date phrases resolved against context.now (DESIGN.md: 2026-04-07 is a Tuesday)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracekit.cases.dates import DateError, DateSpan, parse_date_value, resolve_date

NOW = dt.date(2026, 4, 7)


def day(text: str) -> DateSpan:
    value = dt.date.fromisoformat(text)
    return DateSpan(value, value)


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("今天", day("2026-04-07")),
        ("明天", day("2026-04-08")),
        ("后天", day("2026-04-09")),
        ("大后天", day("2026-04-10")),
        ("下周五", day("2026-04-17")),
        ("下星期五", day("2026-04-17")),
        ("这周六", day("2026-04-11")),
        ("本周日", day("2026-04-12")),
        ("周五", day("2026-04-10")),
        ("下下周一", day("2026-04-20")),
        ("下周", DateSpan(dt.date(2026, 4, 13), dt.date(2026, 4, 19))),
        ("下周末", DateSpan(dt.date(2026, 4, 18), dt.date(2026, 4, 19))),
        ("5 月 10 号", day("2026-05-10")),
        ("5月10日", day("2026-05-10")),
        ("5 月 1 号", day("2026-05-01")),
        ("3天后", day("2026-04-10")),
        ("两天后", day("2026-04-09")),
        ("2026-05-02", day("2026-05-02")),
        # 国务院办公厅关于2026年部分节假日安排的通知: 端午节 6月19日至21日
        ("端午", day("2026-06-19")),
        ("端午节", day("2026-06-19")),
        ("端午假期", DateSpan(dt.date(2026, 6, 19), dt.date(2026, 6, 21))),
        ("五一", day("2026-05-01")),
        ("国庆假期", DateSpan(dt.date(2026, 10, 1), dt.date(2026, 10, 7))),
        ("中秋", day("2026-09-25")),
    ],
)
def test_phrases_resolve_from_2026_04_07(phrase: str, expected: DateSpan) -> None:
    assert resolve_date(phrase, NOW) == expected


def test_a_past_month_day_or_festival_is_next_years() -> None:
    assert resolve_date("3月1日", NOW) == day("2027-03-01")
    assert resolve_date("春节", NOW) == day("2027-02-06")  # 2026's (02-17) has passed


def test_relative_phrases_need_now_but_full_dates_do_not() -> None:
    with pytest.raises(DateError, match=r"needs context\.now"):
        resolve_date("明天", None)
    assert resolve_date("2026年5月10日", None) == day("2026-05-10")


@pytest.mark.parametrize("phrase", ["明儿个", "下周八", "13月1日", "2月30日"])
def test_unknown_or_impossible_phrases_are_errors(phrase: str) -> None:
    with pytest.raises(DateError):
        resolve_date(phrase, NOW)


@given(st.dates(min_value=dt.date(2025, 1, 1), max_value=dt.date(2027, 6, 1)), st.integers(0, 6))
def test_next_week_weekday_lies_in_the_monday_based_next_week(now: dt.date, weekday: int) -> None:
    name = "一二三四五六日"[weekday]
    span = resolve_date(f"下周{name}", now)
    next_monday = now - dt.timedelta(days=now.weekday()) + dt.timedelta(weeks=1)
    assert span.start == span.end == next_monday + dt.timedelta(days=weekday)
    assert span.start in resolve_date("下周", now)


def test_argument_values_read_as_dates() -> None:
    assert parse_date_value("2026-04-17") == dt.date(2026, 4, 17)
    assert parse_date_value("2026/4/17") == dt.date(2026, 4, 17)
    assert parse_date_value("20260417") == dt.date(2026, 4, 17)
    assert parse_date_value("2026-04-17T08:00:00+08:00") == dt.date(2026, 4, 17)
    assert parse_date_value("下周五") is None
    assert parse_date_value(20260417) is None
