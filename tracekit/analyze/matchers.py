"""Argument matchers of expected calls (``expect.calls[].args``), as small named functions.

Each matcher takes the argument (``MISSING`` when the call did not give it) and what it needs to know
about the case, and answers ``(ok, why)``: ``why`` says what was expected and what was seen, so the
check's evidence reads on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracekit.analyze.extensions import match_custom
from tracekit.analyze.values import same_scalar, values_at
from tracekit.cases.dates import DateError, date_readings, parse_date_value
from tracekit.trace.canonical import canonical_json

if TYPE_CHECKING:
    import datetime as dt

    from tracekit.analyze.graph import CallNode
    from tracekit.cases import ArgMatcher


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()
"""The value of an argument the call did not give."""


@dataclass
class MatchContext:
    """What matchers may consult: the case's date (and the weekday the seed gives it), the tool's schema, the
    calls before this one."""

    now: dt.date | None = None
    weekday: str | None = None
    param_schema: dict[str, Any] | None = None
    earlier: list[CallNode] = field(default_factory=list)


MatchResult = tuple[bool, str]


def match_argument(matcher: ArgMatcher, value: Any, context: MatchContext) -> MatchResult:
    """Apply one matcher to one argument value."""
    kind = matcher.kind
    if value is MISSING and kind not in ("present", "any_of", "custom"):
        return False, "argument missing"
    return _MATCHERS[kind](matcher.value, value, context)


def argument_value(arguments: Any, name: str) -> Any:
    """The argument ``name`` (a key, or a dotted path) of a call's input, or ``MISSING``."""
    if isinstance(arguments, dict) and name in arguments:
        return arguments[name]
    found = values_at(arguments, name) if "." in name or "[" in name else []
    return found[0] if found else MISSING


def equal_values(expected: Any, actual: Any) -> bool:
    """JSON equality, lenient about number vs numeric string (``110000`` == ``"110000"``) and about
    surrounding whitespace of strings."""
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip() == actual.strip()
    if isinstance(expected, (dict, list)) or isinstance(actual, (dict, list)):
        return canonical_json(expected) == canonical_json(actual)
    return expected == actual or same_scalar(expected, actual)


def _exact(expected: Any, value: Any, context: MatchContext) -> MatchResult:
    return equal_values(expected, value), f"expected {expected!r}, got {value!r}"


def _subset(expected: Any, value: Any, context: MatchContext) -> MatchResult:
    return _contains(value, expected), f"expected to contain {expected!r}, got {value!r}"


def _contains(value: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(value, dict) and all(k in value and _contains(value[k], v) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(value, list) and all(any(_contains(item, want) for item in value) for want in expected)
    return equal_values(expected, value)


def _one_of(expected: list[Any], value: Any, context: MatchContext) -> MatchResult:
    return any(equal_values(option, value) for option in expected), f"expected one of {expected!r}, got {value!r}"


def _range(expected: Any, value: Any, context: MatchContext) -> MatchResult:
    number = _number(value)
    bounds = f"[{'' if expected.min is None else expected.min}, {'' if expected.max is None else expected.max}]"
    if number is None:
        return False, f"expected a number in {bounds}, got {value!r}"
    ok = (expected.min is None or number >= expected.min) and (expected.max is None or number <= expected.max)
    return ok, f"expected a number in {bounds}, got {value!r}"


def _regex(pattern: str, value: Any, context: MatchContext) -> MatchResult:
    text = value if isinstance(value, str) else canonical_json(value).decode()
    return re.search(pattern, text) is not None, f"expected to match /{pattern}/, got {value!r}"


def _contains_text(needle: str, value: Any, context: MatchContext) -> MatchResult:
    text = value if isinstance(value, str) else canonical_json(value).decode()
    return needle in text, f"expected to contain {needle!r}, got {value!r}"


def _enum(expected: bool | list[Any], value: Any, context: MatchContext) -> MatchResult:
    if isinstance(expected, list):
        allowed: list[Any] = expected
    else:
        schema_enum = (context.param_schema or {}).get("enum")
        if not isinstance(schema_enum, list):
            return False, "the tool schema declares no enum for this argument"
        allowed = schema_enum
        if expected is False:
            return value not in allowed, f"expected a value outside the enum {allowed!r}, got {value!r}"
    return value in allowed, f"expected one of the enum {allowed!r}, got {value!r}"


def _relative_date(phrase: str, value: Any, context: MatchContext) -> MatchResult:
    try:
        readings = date_readings(phrase, context.now, context.weekday)
    except DateError as exc:
        return False, str(exc)
    day = parse_date_value(value)
    if len(readings) == 1:
        expected = f"{phrase!r} = {readings[0][0]} (now {context.now})"
    else:
        # The seed contradicts itself about now's weekday: either reading is right (DESIGN.md "Cases").
        expected = f"{phrase!r} = " + " or ".join(f"{span} ({why})" for span, why in readings)
    if day is None:
        return False, f"expected a date: {expected}; got {value!r}"
    matched = next((why for span, why in readings if day in span), None)
    accepted = f"; accepted on the reading '{matched}'" if matched is not None and len(readings) > 1 else ""
    return matched is not None, f"expected {expected}, got {value!r}{accepted}"


def _from_output(reference: Any, value: Any, context: MatchContext) -> MatchResult:
    sources = [node for node in context.earlier if node.tool == reference.tool and node.succeeded]
    if not sources:
        return False, f"no successful {reference.tool} call before this one to take {reference.path} from"
    for node in sources:
        found = values_at(node.result, reference.path)
        if any(equal_values(candidate, value) for candidate in found):
            return True, f"{value!r} is {reference.tool}.{reference.path} of call #{node.index}"
    seen = [v for node in sources for v in values_at(node.result, reference.path)][:5]
    return False, f"expected {reference.tool}.{reference.path} (one of {seen!r}), got {value!r}"


def _present(expected: bool, value: Any, context: MatchContext) -> MatchResult:
    given = value is not MISSING and value not in ("", None, [], {})
    return given == bool(expected), ("argument given" if given else "argument missing or empty")


def _any_of(matchers: list[ArgMatcher], value: Any, context: MatchContext) -> MatchResult:
    reasons = []
    for matcher in matchers:
        ok, why = match_argument(matcher, value, context)
        if ok:
            return True, why
        reasons.append(why)
    return False, " / ".join(reasons)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


_MATCHERS: dict[str, Callable[[Any, Any, MatchContext], MatchResult]] = {
    "exact": _exact,
    "subset": _subset,
    "one_of": _one_of,
    "range": _range,
    "regex": _regex,
    "contains": _contains_text,
    "enum": _enum,
    "relative_date": _relative_date,
    "from_output": _from_output,
    "present": _present,
    "any_of": _any_of,
    "custom": match_custom,
}
