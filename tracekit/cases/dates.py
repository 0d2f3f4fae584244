"""Relative date phrases ("明天", "下周五", "5 月 10 号", "端午") resolved against a case's ``context.now``.

A phrase resolves to a ``DateSpan``: one day for "明天", a whole week for "下周". Weeks run Monday to
Sunday, as on Chinese calendars: with now = 2026-04-07 (a Tuesday), 这周六 is 2026-04-11, 下周五 is
2026-04-17 and 下周 is 2026-04-13..2026-04-19. A month/day without a year is the next such day on or
after ``now``; a festival is its next occurrence on or after ``now``.

>>> resolve_date("下周五", dt.date(2026, 4, 7))
DateSpan(start=datetime.date(2026, 4, 17), end=datetime.date(2026, 4, 17))
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from tracekit.errors import DateError


@dataclass(frozen=True)
class DateSpan:
    """An inclusive range of days; a single day has ``start == end``."""

    start: dt.date
    end: dt.date

    def __contains__(self, day: object) -> bool:
        return isinstance(day, dt.date) and self.start <= day <= self.end

    def __str__(self) -> str:
        return self.start.isoformat() if self.start == self.end else f"{self.start}..{self.end}"


# Festival days (the day itself) and public-holiday breaks, mainland China.
# 2026: 国务院办公厅关于2026年部分节假日安排的通知 (2025-11-04), e.g. https://politics.gmw.cn/2025-11/04/
# content_38391083.htm — 端午节 6月19日(周五)至21日, 中秋节 9月25日至27日, 劳动节 5月1日至5日,
# 国庆节 10月1日至7日, 春节 2月15日(腊月二十八)至23日 (so 正月初一 is 2月17日).
# 2025 and 2027 festival days are the lunar-calendar days (端午 五月初五, 中秋 八月十五, 春节 正月初一).
FESTIVAL_DAYS: dict[str, list[dt.date]] = {
    "元旦": [dt.date(2025, 1, 1), dt.date(2026, 1, 1), dt.date(2027, 1, 1)],
    "春节": [dt.date(2025, 1, 29), dt.date(2026, 2, 17), dt.date(2027, 2, 6)],
    "清明": [dt.date(2025, 4, 4), dt.date(2026, 4, 5), dt.date(2027, 4, 5)],
    "劳动节": [dt.date(2025, 5, 1), dt.date(2026, 5, 1), dt.date(2027, 5, 1)],
    "端午": [dt.date(2025, 5, 31), dt.date(2026, 6, 19), dt.date(2027, 6, 9)],
    "中秋": [dt.date(2025, 10, 6), dt.date(2026, 9, 25), dt.date(2027, 9, 15)],
    "国庆": [dt.date(2025, 10, 1), dt.date(2026, 10, 1), dt.date(2027, 10, 1)],
}
HOLIDAY_BREAKS_2026: dict[str, DateSpan] = {
    "元旦": DateSpan(dt.date(2026, 1, 1), dt.date(2026, 1, 3)),
    "春节": DateSpan(dt.date(2026, 2, 15), dt.date(2026, 2, 23)),
    "清明": DateSpan(dt.date(2026, 4, 4), dt.date(2026, 4, 6)),
    "劳动节": DateSpan(dt.date(2026, 5, 1), dt.date(2026, 5, 5)),
    "端午": DateSpan(dt.date(2026, 6, 19), dt.date(2026, 6, 21)),
    "中秋": DateSpan(dt.date(2026, 9, 25), dt.date(2026, 9, 27)),
    "国庆": DateSpan(dt.date(2026, 10, 1), dt.date(2026, 10, 7)),
}
_FESTIVAL_ALIASES = {"五一": "劳动节", "十一": "国庆", "过年": "春节", "新年": "元旦"}

_DAY_OFFSETS = {
    "大前天": -3, "前天": -2, "昨天": -1, "今天": 0, "今日": 0, "明天": 1, "明日": 1, "后天": 2, "大后天": 3,
}  # fmt: skip
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6}
_WEEKDAY_NAMES = "一二三四五六日"
_NUMERALS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}

_WEEK_PREFIX = r"(?P<which>这|本|这个|下|下个|下下|下下个|上|上个)?"
_WEEK_WORD = r"(?:周|星期|礼拜)"
_WEEKDAY_RE = re.compile(rf"^{_WEEK_PREFIX}{_WEEK_WORD}(?P<day>[一二三四五六日天七])$")
_WEEK_RE = re.compile(rf"^(?P<which>这|本|下|下下|上)(?:个)?{_WEEK_WORD}末?$")
_WEEKEND_RE = re.compile(rf"^{_WEEK_PREFIX}(?:周末)$")
_MONTH_DAY_RE = re.compile(r"^(?:(?P<year>\d{4})\s*年\s*)?(?P<month>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*[日号]?$")
_SLASH_RE = re.compile(r"^(?P<month>\d{1,2})\s*[/.]\s*(?P<day>\d{1,2})$")
_DAYS_LATER_RE = re.compile(r"^(?P<n>\d+|[一两二三四五六七八九十])\s*天(?:后|以后|之后)$")
_ISO_RE = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$")


def resolve_date(phrase: str, now: dt.date | None) -> DateSpan:
    """The day (or days) a date phrase means on ``now``. Raises DateError when it cannot say."""
    text = re.sub(r"\s+", " ", phrase.strip())
    compact = text.replace(" ", "")
    iso = parse_date_value(compact)
    if iso is not None:
        return DateSpan(iso, iso)
    if now is None:
        match = _MONTH_DAY_RE.match(compact)
        if match is not None and match["year"]:  # a full date needs no "now"
            return _month_day(compact, dt.date.min)  # type: ignore[return-value]
        raise DateError(f"relative date {phrase!r} needs context.now")
    if compact in _DAY_OFFSETS:
        day = now + dt.timedelta(days=_DAY_OFFSETS[compact])
        return DateSpan(day, day)
    for resolve in (_weekday, _week, _weekend, _month_day, _days_later, _festival):
        span = resolve(compact, now)
        if span is not None:
            return span
    raise DateError(f"unknown date phrase {phrase!r}")


def weekday_number(text: str | None) -> int | None:
    """Monday = 0 for a weekday name ('周一', '星期五', '礼拜天'), None for anything else."""
    match = re.fullmatch(rf"\s*{_WEEK_WORD}(?P<day>[一二三四五六日天七])\s*", text or "")
    return _WEEKDAYS[match["day"]] if match else None


def date_readings(phrase: str, now: dt.date | None, stated_weekday: str | None = None) -> list[tuple[DateSpan, str]]:
    """The days a phrase may mean: the calendar's reading, then, when the case states a weekday for ``now``
    that the calendar contradicts and the phrase counts in weeks, the reading that trusts the stated weekday.

    The seeds call 2026-04-07 周一 (it is a Tuesday); trusting that, 下周五 is 2026-04-18:

    >>> [(str(span), why) for span, why in date_readings("下周五", dt.date(2026, 4, 7), "周一")]
    [('2026-04-17', 'calendar: 2026-04-07 is 周二'), ('2026-04-18', 'the seed calls 2026-04-07 周一')]

    Raises ``DateError`` as ``resolve_date`` does."""
    span = resolve_date(phrase, now)
    stated = weekday_number(stated_weekday)
    if now is None or stated is None or stated == now.weekday():
        return [(span, f"calendar: {now} is 周{_WEEKDAY_NAMES[now.weekday()]}" if now else "calendar")]
    readings = [(span, f"calendar: {now} is 周{_WEEKDAY_NAMES[now.weekday()]}")]
    compact = re.sub(r"\s+", "", phrase)
    if any(pattern.match(compact) for pattern in (_WEEKDAY_RE, _WEEK_RE, _WEEKEND_RE)):
        shift = dt.timedelta(days=now.weekday() - stated)
        seeded = resolve_date(phrase, now - shift)
        seeded = DateSpan(seeded.start + shift, seeded.end + shift)
        if seeded != span:
            readings.append((seeded, f"the seed calls {now} {stated_weekday}"))
    return readings


def parse_date_value(value: object) -> dt.date | None:
    """An argument value read as a calendar date ('2026-04-17', '2026/4/17', '20260417'), else None."""
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    match = _ISO_RE.match(text) or re.match(r"^(\d{4})(\d{2})(\d{2})$", text)
    if match is None:
        text = text[:10] if re.match(r"^\d{4}-\d{2}-\d{2}T", text) else ""
        match = _ISO_RE.match(text) if text else None
    if match is None:
        return None
    try:
        return dt.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def _monday(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def _week_offset(which: str | None) -> int | None:
    """Weeks from this week: 这/本 0, 下 1, 下下 2, 上 -1; None for a bare 周五 (the coming one)."""
    if which is None:
        return None
    which = which.removesuffix("个")
    return {"这": 0, "本": 0, "下": 1, "下下": 2, "上": -1}[which]


def _weekday(text: str, now: dt.date) -> DateSpan | None:
    match = _WEEKDAY_RE.match(text)
    if match is None:
        return None
    weekday = _WEEKDAYS[match["day"]]
    offset = _week_offset(match["which"])
    if offset is None:  # bare 周五: the next such day, today included
        day = now + dt.timedelta(days=(weekday - now.weekday()) % 7)
    else:
        day = _monday(now) + dt.timedelta(weeks=offset, days=weekday)
    return DateSpan(day, day)


def _week(text: str, now: dt.date) -> DateSpan | None:
    match = _WEEK_RE.match(text)
    if match is None:
        return None
    offset = _week_offset(match["which"]) or 0
    start = _monday(now) + dt.timedelta(weeks=offset)
    if text.endswith("末"):
        return DateSpan(start + dt.timedelta(days=5), start + dt.timedelta(days=6))
    return DateSpan(start, start + dt.timedelta(days=6))


def _weekend(text: str, now: dt.date) -> DateSpan | None:
    match = _WEEKEND_RE.match(text)
    if match is None:
        return None
    offset = _week_offset(match["which"]) or 0
    saturday = _monday(now) + dt.timedelta(weeks=offset, days=5)
    return DateSpan(saturday, saturday + dt.timedelta(days=1))


def _month_day(text: str, now: dt.date) -> DateSpan | None:
    match = _MONTH_DAY_RE.match(text) or _SLASH_RE.match(text)
    if match is None:
        return None
    month, day = int(match["month"]), int(match["day"])
    year = int(match["year"]) if "year" in match.groupdict() and match["year"] else None
    try:
        if year is not None:
            result = dt.date(year, month, day)
        else:
            result = dt.date(now.year, month, day)
            if result < now:
                result = dt.date(now.year + 1, month, day)
    except ValueError:
        raise DateError(f"no such day: {text!r}") from None
    return DateSpan(result, result)


def _days_later(text: str, now: dt.date) -> DateSpan | None:
    match = _DAYS_LATER_RE.match(text)
    if match is None:
        return None
    count = match["n"]
    days = int(count) if count.isdigit() else _NUMERALS[count]
    day = now + dt.timedelta(days=days)
    return DateSpan(day, day)


def _festival(text: str, now: dt.date) -> DateSpan | None:
    is_break = text.endswith(("假期", "小长假", "长假", "黄金周"))
    base = re.sub(r"(假期|小长假|长假|黄金周|当天)$", "", text)
    candidates = [base, base.removesuffix("节"), base + "节"]
    names = [_FESTIVAL_ALIASES.get(candidate, candidate) for candidate in candidates]
    name = next((name for name in names if name in FESTIVAL_DAYS), None)
    if name is None:
        return None
    day = next((day for day in FESTIVAL_DAYS[name] if day >= now), None)
    if day is None:
        raise DateError(f"no table entry for {text!r} after {now}")
    if is_break:
        holiday = HOLIDAY_BREAKS_2026.get(name)
        if holiday is not None and day in holiday:
            return holiday
    return DateSpan(day, day)
