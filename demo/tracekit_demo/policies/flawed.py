"""A generic flawed plan for a case without a hand-written one: the typical failure its checks look for.

In order of preference: call a tool the case forbids (``wrong_tool``); call with assumed values where it
should ask (``assumed_parameters``); skip the lookup and invent the identifier (``ungrounded_id``); get a
relative date wrong (``wrong_date``); drop an argument (``lost_parameter``); give up at the first failure
(``premature_give_up``); repeat a call (``redundant_calls``); pad the answer (``verbose_answer``); call a
tool where none is needed (``over_tooling``); otherwise answer with invented specifics (``fabrication``).
"""

from __future__ import annotations

from typing import Any

from tracekit.cases import Case, Catalog
from tracekit_demo.policies.derive import derive_args, reference_plan
from tracekit_demo.policies.steps import Call, DateOf, Plan, PolicyError, Ref, Say

PADDING = (
    "温馨提示：以上信息仅供参考，实际情况请以官方渠道为准。如果你还有任何其他问题，欢迎随时向我提问，我会尽力为你解答。"
    "另外，出行前建议关注天气变化、合理安排行程、注意人身和财产安全，祝你生活愉快、一切顺利！"
)


def generic_flawed_plan(case: Case, catalog: Catalog) -> Plan:
    """The generic flawed plan (see the module docstring)."""
    expect = case.expect
    user_text = case.input.user or "帮我查一下"
    offered = [tool for tool in expect.forbidden_tools if tool in case.context.tools and tool in catalog]
    if offered:
        tool = offered[0]
        return Plan([Call(tool, fill_required(tool, catalog, user_text)), Say("根据搜索结果，已为你找到相关信息。")],
                    failure="wrong_tool", note=f"calls the forbidden {tool}")
    if expect.ask_user and expect.calls == [] and "search_flights" in case.context.tools:
        assumed = {"origin": "北京", "destination": "曼谷", "date": DateOf("明天")}
        return Plan([Call("search_flights", assumed), Say("已按北京出发、明天出行为你查询了航班。")],
                    failure="assumed_parameters", note="assumes origin and date instead of asking")
    for position, expected in enumerate(expect.calls):
        tool = expected.tools[0]
        refs = {name: m for name, m in expected.args.items() if m.kind == "from_output"}
        if refs:
            args = _safe_args(expected, tool, catalog)
            for name in refs:
                args[name] = "unknown_id"
            return Plan([Call(tool, args), Say("已为你查到相关结果。")], failure="ungrounded_id",
                        note=f"skips the lookup and invents {', '.join(refs)} for {tool}")
        dates = [name for name, m in expected.args.items() if m.kind == "relative_date"]
        if dates:
            args = _safe_args(expected, tool, catalog)
            args[dates[0]] = DateOf("今天")
            earlier = [Call(e.tools[0], _safe_args(e, e.tools[0], catalog)) for e in expect.calls[:position]]
            return Plan([*earlier, Call(tool, args), Say("已为你查询。")], failure="wrong_date",
                        note=f"puts today's date into {tool}.{dates[0]}")
        if expected.args:
            args = _safe_args(expected, tool, catalog)
            dropped = next(iter(expected.args))
            args.pop(dropped, None)
            args = fill_required(tool, catalog, user_text, args)
            return Plan([Call(tool, args), Say("已为你查询。")], failure="lost_parameter",
                        note=f"loses {tool}.{dropped}")
    if expect.recovery is not None and expect.recovery.failing_tool:
        tool = expect.recovery.failing_tool
        return Plan([Call(tool, fill_required(tool, catalog, user_text)), Say("抱歉，没有查到。")],
                    failure="premature_give_up", note=f"gives up after the first {tool} failure")
    if expect.no_repeated_calls or expect.tool_counts or expect.call_count:
        reference = reference_plan(case, catalog)
        calls = [step for step in reference.steps if isinstance(step, Call)]
        if calls:
            return Plan([*calls, *calls, *calls, Say("已为你查询完毕。")], failure="redundant_calls",
                        note="runs the expected calls three times over")
    if expect.output_tokens is not None:
        return Plan([Say(PADDING * 12)], failure="verbose_answer", note="pads the answer far past the token tiers")
    if expect.no_tool_call:
        tool = case.context.tools[0] if case.context.tools else "web_search"
        return Plan([Call(tool, fill_required(tool, catalog, user_text)), Say("已查询。")], failure="over_tooling",
                    note=f"calls {tool} although no tool is needed")
    return Plan([Say("查到了：价格 1288 元，评分 4.9 分，周一至周日 9:00-22:00 营业，明天下午 3 点前送达。")],
                failure="fabrication", note="answers with invented specifics without evidence")


def fill_required(tool: str, catalog: Catalog, text: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """``args`` plus a value for every required parameter of ``tool`` (strings get ``text``)."""
    args = dict(args or {})
    schema = catalog[tool].input_schema if tool in catalog else {}
    for name in schema.get("required", []):
        if name in args:
            continue
        spec = schema.get("properties", {}).get(name, {})
        if "default" in spec:
            args[name] = spec["default"]
        elif spec.get("enum"):
            args[name] = spec["enum"][0]
        elif spec.get("type") in ("integer", "number"):
            args[name] = 1
        elif spec.get("type") == "array":
            args[name] = [text]
        else:
            args[name] = text
    return args


def _safe_args(expected: Any, tool: str, catalog: Catalog) -> dict[str, Any]:
    try:
        args = derive_args(expected, tool, catalog)
    except PolicyError:
        return {}
    return {name: value for name, value in args.items() if not isinstance(value, Ref)}
