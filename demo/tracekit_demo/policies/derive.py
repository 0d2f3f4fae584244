"""Deriving a reference plan from a case's ``expect``: argument values that satisfy its matchers.

For each expected call (in order) the plan calls the tool with values chosen to satisfy each matcher:
``exact`` / ``subset`` / ``contains`` their operand, ``one_of`` and ``enum`` the first allowed value,
``range`` a value inside, ``relative_date`` the date it means, ``from_output`` a ``Ref`` to the earlier
result, ``regex`` the shortest string the pattern accepts, ``any_of`` the first derivable alternative,
``present: false`` nothing. Required parameters no matcher names take the schema's default or first enum
value. Then it answers, with the strings the answer checks require. Cases this cannot express have a
hand-written plan instead (``tracekit_demo.policies.scripts``).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from tracekit.cases import ArgMatcher, Case, Catalog, ExpectedCall
from tracekit_demo.policies.dialogue import Dialogue, SeenResult
from tracekit_demo.policies.steps import Call, Calls, DateOf, Plan, PolicyError, Ref, Say, Step

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_constants
    import sre_parse

OMIT = object()
"""A matcher satisfied by leaving the argument out."""


def derive_value(matcher: ArgMatcher, schema: dict[str, Any] | None) -> Any:
    """A value (or Ref / DateOf / OMIT) that satisfies ``matcher``; PolicyError when none can be derived."""
    kind, operand = matcher.kind, matcher.value
    if kind in ("exact", "subset", "contains"):
        return operand
    if kind == "one_of":
        return operand[0]
    if kind == "range":
        low, high = operand.min, operand.max
        value = (low + high) / 2 if low is not None and high is not None else (low if low is not None else high)
        return int(value) if value is not None and float(value).is_integer() else value
    if kind == "relative_date":
        return DateOf(operand)
    if kind == "from_output":
        return Ref(operand.tool, operand.path)
    if kind == "enum":
        allowed = operand if isinstance(operand, list) else (schema or {}).get("enum")
        if allowed:
            return allowed[0]
    if kind == "regex":
        example = regex_example(operand)
        if example is not None:
            return example
    if kind == "present":
        if operand is False:
            return OMIT
        default = _schema_default(schema)
        if default is not None:
            return default
    if kind == "any_of":
        for alternative in operand:
            try:
                return derive_value(alternative, schema)
            except PolicyError:
                continue
    raise PolicyError(f"cannot derive a value for matcher {kind}={operand!r}")


def derive_args(expected: ExpectedCall, tool: str, catalog: Catalog) -> dict[str, Any]:
    """Arguments for one expected call of ``tool``."""
    schema = catalog[tool].input_schema if tool in catalog else {}
    properties = schema.get("properties", {})
    args: dict[str, Any] = {}
    for name, matcher in expected.args.items():
        try:
            value = derive_value(matcher, properties.get(name))
        except PolicyError as exc:
            raise PolicyError(f"{tool}.{name}: {exc}") from None
        if value is not OMIT:
            args[name] = value
    for name in schema.get("required", []):
        if name not in args:
            default = _schema_default(properties.get(name))
            if default is None:
                raise PolicyError(f"{tool}: required argument {name!r} has no matcher and no schema default")
            args[name] = default
    return args


def reference_plan(case: Case, catalog: Catalog) -> Plan:
    """The plan that does what the case expects (see the module docstring)."""
    expect = case.expect
    if expect.ask_user:
        return Plan([Say(question_text(case))], note="derived from expect: asks the user for what is missing")
    if expect.no_tool_call:
        return Plan([Say(answer_text(case))], note="derived from expect: answers without a tool")
    calls = [Call(_tool_for(case, expected), derive_args(expected, _tool_for(case, expected), catalog))
             for expected in expect.calls]
    steps: list[Step] = []
    for group in _turns(case, calls):
        steps.append(group[0] if len(group) == 1 else Calls(tuple(group)))
    steps.append(lambda dialogue: Say(answer_text(case, dialogue)))
    names = " → ".join(call.tool for call in calls) or "no tool"
    return Plan(steps, note=f"derived from expect: {names}, then answers")


def question_text(case: Case) -> str:
    """A question to the user (the analysis counts a message with a question mark as asking)."""
    return "为了帮你查询，我还需要一些信息：请问你从哪里出发、打算哪天出行？"


def answer_text(case: Case, dialogue: Dialogue | None = None) -> str:
    """A short answer built from the results (each one line) and the strings the answer checks require."""
    lines = [brief(result) for result in dialogue.results[-3:]] if dialogue is not None else []
    check = case.expect.answer
    if check is not None and [*check.contains_all, *check.contains_any[:1]]:
        lines.append("要点：" + "、".join([*check.contains_all, *check.contains_any[:1]]) + "。")
    return "\n".join(lines) or "好的，这个问题不需要调用工具。"


#: Fields that name a result item, and fields worth quoting after the name (with their Chinese labels).
HEADLINE_KEYS = ("title", "name", "community_name", "flight_no", "question", "city_name", "text")
DETAIL_LABELS = {
    "airline": "", "departure_time": "起飞 ", "weather": "", "temperature_min": "最低 ", "temperature_max": "最高 ",
    "price": "¥", "price_cny": "¥", "total_price_wan": "总价（万）", "rating": "评分 ", "avg_rating": "评分 ",
    "upvotes": "赞同 ", "hot": "热度 ", "city_id": "城市 ID ", "district": "", "shop": "",
}


def brief(result: SeenResult) -> str:
    """One readable line about a tool result: how many items and the first one, or that it failed."""
    if result.failed:
        return f"{result.name} 没有返回可用结果。"
    data = result.data
    if not isinstance(data, dict):
        return f"{result.text[:80]}。"
    items = next((value for value in data.values() if isinstance(value, list) and value), None)
    first = items[0] if items and isinstance(items[0], dict) else None
    subject = first if first is not None else data
    name = next((str(subject[key]) for key in HEADLINE_KEYS if key in subject), None)
    details = "，".join(f"{label}{subject[key]}" for key, label in DETAIL_LABELS.items()
                        if key in subject and subject[key] not in (None, ""))
    described = f"{name or ''}（{details}）" if details else (name or "")
    if items:
        return f"查到 {data.get('total', len(items))} 条结果，第一条：{described}。"
    return f"结果：{described or result.text[:80]}。"


def regex_example(pattern: str) -> str | None:
    """The shortest string the pattern is likely to accept (first branch, minimum repeats), if it does."""
    try:
        parsed = sre_parse.parse(pattern)
    except re.error:
        return None
    try:
        text = _example(list(parsed))  # type: ignore[call-overload]
    except _NoExample:
        return None
    return text if re.search(pattern, text) else None


class _NoExample(Exception):
    pass


def _example(items: list[tuple[Any, Any]]) -> str:
    out = []
    for op, arg in items:
        if op is sre_constants.LITERAL:
            out.append(chr(arg))
        elif op is sre_constants.SUBPATTERN:
            out.append(_example(list(arg[-1])))
        elif op is sre_constants.BRANCH:
            out.append(_example(list(arg[1][0])))
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            low, _high, body = arg
            out.append(_example(list(body)) * low)
        elif op is sre_constants.IN:
            out.append(_class_member(arg))
        elif op is sre_constants.ANY:
            out.append("x")
        elif op is sre_constants.AT:
            continue
        else:
            raise _NoExample(op)
    return "".join(out)


def _class_member(items: list[tuple[Any, Any]]) -> str:
    for op, arg in items:
        if op is sre_constants.LITERAL:
            return chr(arg)
        if op is sre_constants.RANGE:
            return chr(arg[0])
        if op is sre_constants.CATEGORY:
            return {sre_constants.CATEGORY_DIGIT: "0", sre_constants.CATEGORY_SPACE: " "}.get(arg, "a")
    raise _NoExample("class")


def _schema_default(schema: dict[str, Any] | None) -> Any:
    if not schema:
        return None
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    return None


def _tool_for(case: Case, expected: ExpectedCall) -> str:
    tools = expected.tools
    tiers = case.expect.tool_tiers
    if tiers is not None:
        for tool in tools:
            if tool in tiers.best:
                return tool
    offered = [tool for tool in tools if tool in case.context.tools]
    return (offered or tools)[0]


def _turns(case: Case, calls: list[Call]) -> list[list[Call]]:
    """Calls grouped into assistant turns: a ``parallel`` group of the case goes in one turn."""
    groups: list[list[Call]] = []
    parallel = [set(group) for group in case.expect.parallel]
    for call in calls:
        if groups and any({call.tool, groups[-1][-1].tool} <= group for group in parallel) \
                and not _depends(call, groups[-1]):
            groups[-1].append(call)
        else:
            groups.append([call])
    return groups


def _depends(call: Call, earlier: list[Call]) -> bool:
    tools = {other.tool for other in earlier}
    return any(isinstance(value, Ref) and value.tool in tools for value in call.args.values())
