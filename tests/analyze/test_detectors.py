"""Detectors on hand-made traces: each kind's positive case and its near misses."""

from __future__ import annotations

from typing import Any

import pytest

from tracekit.analyze.detectors import DetectorContext, DetectorOptionError, Finding, resolve_options, run_detectors
from tracekit.analyze.graph import build_graph
from tracekit.cases import Catalog, ToolSpec
from tracekit.trace import Trace

from .factories import Call, build_trace, call, messages_of, parallel, say, user

ERROR = "Error: service unavailable"


def findings(trace: Trace, *, history: int = 0, catalog: Catalog | None = None, **options: Any) -> list[Finding]:
    overrides: dict[str, dict[str, Any]] = {}
    for name, value in options.items():
        kind, key = name.split("__")
        overrides.setdefault(kind, {})[key] = value
    graph = build_graph(trace.calls(history))
    return run_detectors(DetectorContext(graph, trace, catalog, None, history), resolve_options(overrides))


def kinds(found: list[Finding], kind: str) -> list[list[int]]:
    return [finding.calls for finding in found if finding.kind == kind]


def trace_of(*steps: Any) -> Trace:
    return build_trace(messages_of([user("帮我查一下"), *steps]))


# --------------------------------------------------------------------------- repeated_call


def test_repeated_call_after_success_is_flagged_from_the_first_repeat() -> None:
    trace = trace_of(
        call("maps_weather", {"city": "北京"}, {"weather": "晴"}),
        call("maps_weather", {"city": "北京"}, {"weather": "晴"}),
        say("北京晴。"),
    )
    found = findings(trace)
    assert kinds(found, "repeated_call") == [[0, 1]]
    assert found[0].severity == "warning"
    assert "maps_weather" in found[0].message and "reuse" in found[0].message


def test_repeated_call_compares_arguments_canonically() -> None:
    trace = trace_of(
        call("search", {"a": 1, "b": "x"}, {"ok": 1}),
        call("search", {"b": "x", "a": 1}, {"ok": 1}),
    )
    assert kinds(findings(trace), "repeated_call") == [[0, 1]]


def test_repeat_after_an_error_or_with_other_arguments_is_not_a_repeated_call() -> None:
    trace = trace_of(
        call("maps_weather", {"city": "北京"}, ERROR, error=True),
        call("maps_weather", {"city": "北京"}, {"weather": "晴"}),
        call("maps_weather", {"city": "上海"}, {"weather": "雨"}),
    )
    assert kinds(findings(trace), "repeated_call") == []


def test_identical_parallel_calls_have_not_returned_yet_so_they_are_not_repeats() -> None:
    trace = trace_of(
        parallel(Call("maps_weather", {"city": "北京"}, "{}"), Call("maps_weather", {"city": "北京"}, "{}"))
    )
    assert kinds(findings(trace), "repeated_call") == []


def test_repeated_call_error_severity_and_min_repeats_option() -> None:
    steps = [call("get_user", {"id": "u1"}, {"name": "A"}) for _ in range(4)]
    found = findings(trace_of(*steps))
    assert [(f.calls, f.severity) for f in found if f.kind == "repeated_call"] == [([0, 1, 2, 3], "error")]
    assert kinds(findings(trace_of(*steps[:2]), repeated_call__min_repeats=2), "repeated_call") == []


def test_history_calls_are_context_and_never_flagged() -> None:
    history_steps = [call("maps_weather", {"city": "北京"}, {"weather": "晴"}), say("晴"), user("那后天呢")]
    trace = trace_of(*history_steps, call("maps_weather", {"city": "北京"}, {"weather": "晴"}))
    history = 1 + 2 + 2  # user, call + result, answer, user
    [finding] = [f for f in findings(trace, history=history) if f.kind == "repeated_call"]
    assert (finding.calls, finding.context_calls) == ([1], [0])
    only_history = trace_of(*history_steps[:1], *history_steps[:1])
    assert kinds(findings(only_history, history=99), "repeated_call") == []


# --------------------------------------------------------------------------- retry_storm


def test_retry_storm_after_three_identical_failures_even_when_not_adjacent() -> None:
    trace = trace_of(
        call("search_flights", {"date": "下周五"}, ERROR, error=True),
        call("search_flights", {"date": "下周五"}, ERROR, error=True),
        call("web_search", {"query": "机票"}, {"results": []}),
        call("search_flights", {"date": "下周五"}, ERROR, error=True),
    )
    found = findings(trace)
    assert kinds(found, "retry_storm") == [[0, 1, 3]]
    assert found[0].severity == "error" and "failed 3 times" in found[0].message


def test_retry_with_changed_arguments_after_an_error_is_not_a_retry_storm() -> None:
    trace = trace_of(
        call("search_flights", {"date": "下周五"}, ERROR, error=True),
        call("search_flights", {"date": "2026-04-17"}, ERROR, error=True),
        call("search_flights", {"date": "2026/04/17"}, ERROR, error=True),
    )
    assert kinds(findings(trace), "retry_storm") == []


def test_two_identical_failures_are_below_the_default_and_the_threshold_is_configurable() -> None:
    two = trace_of(*[call("lookup", {"name": "x"}, ERROR, error=True) for _ in range(2)])
    assert kinds(findings(two), "retry_storm") == []
    assert kinds(findings(two, retry_storm__failures=2), "retry_storm") == [[0, 1]]


# --------------------------------------------------------------------------- alternating_loop


def _detail_loop(times: int, vary: bool = False) -> Trace:
    steps = []
    for turn in range(times):
        post = f"wb_00{turn}" if vary else "wb_001"
        steps.append(call("weibo_get_post_detail", {"post_id": post}, {"post_id": post}))
        steps.append(call("weibo_get_post_comments", {"post_id": post}, {"comments": []}))
    return trace_of(*steps)


def test_alternating_loop_a_b_a_b_with_identical_arguments() -> None:
    found = findings(_detail_loop(2))
    [loop] = [f for f in found if f.kind == "alternating_loop"]
    assert (loop.calls, loop.severity) == ([0, 1, 2, 3], "warning")
    assert "weibo_get_post_detail → weibo_get_post_comments" in loop.message


def test_alternating_loop_is_an_error_from_three_repeats() -> None:
    [loop] = [f for f in findings(_detail_loop(3)) if f.kind == "alternating_loop"]
    assert (loop.calls, loop.severity) == ([0, 1, 2, 3, 4, 5], "error")


def test_paging_over_results_with_the_same_tool_names_is_not_a_loop() -> None:
    steps = []
    for page in range(1, 4):
        steps.append(call("taobao_search_products", {"keyword": "键盘", "page": page}, {"items": [{"id": page}]}))
        steps.append(call("taobao_get_product_detail", {"product_id": page}, {"price": 1}))
    assert kinds(findings(trace_of(*steps)), "alternating_loop") == []
    assert kinds(findings(_detail_loop(3, vary=True)), "alternating_loop") == []


def test_a_cycle_of_three_and_the_all_identical_cycle() -> None:
    cycle = [call("a", {"x": 1}), call("b", {"x": 1}), call("c", {"x": 1})]
    assert kinds(findings(trace_of(*cycle, *cycle)), "alternating_loop") == [[0, 1, 2, 3, 4, 5]]
    same = [call("a", {"x": 1}, ERROR, error=True)] * 4
    assert kinds(findings(trace_of(*same)), "alternating_loop") == []


# --------------------------------------------------------------------------- catalog-based detectors


def _catalog() -> Catalog:
    catalog = Catalog()
    catalog.add(
        ToolSpec(
            name="beike_lookup_city_id",
            description="城市 ID",
            kind="lookup",
            output_ids=["city_id"],
            input_schema={"type": "object", "properties": {"city_name": {"type": "string"}}},
        )
    )
    catalog.add(
        ToolSpec(
            name="beike_search_resale_housing",
            description="二手房",
            kind="search",
            id_params=["city_id"],
            depends_on={"city_id": "beike_lookup_city_id.city_id"},
            input_schema={"type": "object", "properties": {"city_id": {"type": "integer"}}, "required": ["city_id"]},
        )
    )
    return catalog


def test_order_violation_when_the_dependent_call_comes_first() -> None:
    trace = trace_of(
        call("beike_search_resale_housing", {"city_id": 110000}, {"total": 0}),
        call("beike_lookup_city_id", {"city_name": "北京"}, {"city_id": 110000}),
    )
    found = findings(trace, catalog=_catalog())
    assert kinds(found, "order_violation") == [[0]]
    assert "beike_lookup_city_id" in next(f for f in found if f.kind == "order_violation").message


def test_no_order_violation_after_a_successful_lookup_nor_without_a_catalog() -> None:
    ordered = trace_of(
        call("beike_lookup_city_id", {"city_name": "北京"}, {"city_id": 110000}),
        call("beike_search_resale_housing", {"city_id": 110000}, {"total": 0}),
    )
    assert kinds(findings(ordered, catalog=_catalog()), "order_violation") == []
    failed_first = trace_of(
        call("beike_lookup_city_id", {"city_name": "北京"}, ERROR, error=True),
        call("beike_search_resale_housing", {"city_id": 110000}, {"total": 0}),
    )
    assert kinds(findings(failed_first, catalog=_catalog()), "order_violation") == [[1]]
    assert kinds(findings(failed_first), "order_violation") == []


def test_a_dependency_is_satisfied_by_any_tool_that_produced_the_value() -> None:
    catalog = _catalog()
    catalog.add(ToolSpec(name="beike_hot_listings", description="热门", kind="search",
                         input_schema={"type": "object", "properties": {}}))
    from_other_tool = trace_of(
        call("beike_hot_listings", {}, {"items": [{"city_id": 110000}]}),
        call("beike_search_resale_housing", {"city_id": 110000}, {"total": 0}),
    )
    assert kinds(findings(from_other_tool, catalog=catalog), "order_violation") == []
    made_up = trace_of(
        call("beike_hot_listings", {}, {"items": [{"city_id": 310000}]}),
        call("beike_search_resale_housing", {"city_id": 110000}, {"total": 0}),
    )
    assert kinds(findings(made_up, catalog=catalog), "order_violation") == [[1]]


def test_a_dependency_is_satisfied_by_a_value_given_as_that_parameter() -> None:
    search = "beike_search_resale_housing"
    prompt = "已知 city_id 为 110000（北京），搜二手房"
    given = build_trace(messages_of([user(prompt), call(search, {"city_id": 110000})]))
    assert kinds(findings(given, catalog=_catalog()), "order_violation") == []
    # the user named the city, not its id: a city name passed as city_id is still out of order
    name = build_trace(messages_of([user("北京朝阳区有哪些二手房"), call(search, {"city_id": "北京"})]))
    assert kinds(findings(name, catalog=_catalog()), "order_violation") == [[0]]


def test_ungrounded_identifier_argument() -> None:
    trace = trace_of(
        call("taobao_search_products", {"keyword": "耳机"}, {"items": [{"product_id": "tb_001"}]}),
        call("taobao_get_product_detail", {"product_id": "tb_999"}, {"price": 1}),
    )
    found = findings(trace)
    assert kinds(found, "ungrounded_argument") == [[1]]
    assert "tb_999" in next(f for f in found if f.kind == "ungrounded_argument").message


def test_identifiers_from_results_or_the_user_are_grounded() -> None:
    from_result = trace_of(
        call("taobao_search_products", {"keyword": "耳机"}, {"items": [{"product_id": "tb_001"}]}),
        call("taobao_get_product_detail", {"product_id": "tb_001"}, {"price": 1}),
    )
    assert kinds(findings(from_result), "ungrounded_argument") == []
    from_user = build_trace(messages_of([user("我的订单号是 ORD-7731"), call("get_order", {"order_id": "ORD-7731"})]))
    assert kinds(findings(from_user), "ungrounded_argument") == []
    number_in_text = trace_of(call("lookup", {"q": "x"}, "城市 ID 为 110000。"), call("search", {"city_id": 110000}))
    assert kinds(findings(number_in_text), "ungrounded_argument") == []
    # "1" does not occur in "110000": whole tokens only.
    part_of_a_number = trace_of(call("lookup", {"q": "x"}, "城市 ID 为 110000。"), call("search", {"city_id": 1}))
    assert kinds(findings(part_of_a_number), "ungrounded_argument") == [[1]]


def test_catalog_id_params_are_checked_even_without_an_id_name() -> None:
    catalog = _catalog()
    catalog.add(
        ToolSpec(
            name="weather",
            description="天气",
            kind="search",
            id_params=["adcode"],
            input_schema={"type": "object", "properties": {"adcode": {"type": "string"}}},
        )
    )
    trace = trace_of(call("weather", {"adcode": "110105"}))
    assert kinds(findings(trace, catalog=catalog), "ungrounded_argument") == [[0]]
    assert kinds(findings(trace), "ungrounded_argument") == []


def test_unused_lookup_output() -> None:
    trace = trace_of(
        call("beike_lookup_city_id", {"city_name": "北京"}, {"city_id": 110000}),
        call("web_search", {"query": "北京朝阳二手房"}, {"results": []}),
        say("没有找到。"),
    )
    found = findings(trace, catalog=_catalog())
    assert kinds(found, "unused_output") == [[0]]
    assert kinds(findings(trace), "unused_output") == [[0]]  # generic rule: a tool named *lookup*


def test_lookup_output_used_by_a_later_call_or_in_the_answer_is_used() -> None:
    passed_on = trace_of(
        call("beike_lookup_city_id", {"city_name": "北京"}, {"city_id": 110000}),
        call("beike_search_resale_housing", {"city_id": 110000}, {"total": 0}),
    )
    assert kinds(findings(passed_on, catalog=_catalog()), "unused_output") == []
    answered = trace_of(
        call("beike_lookup_city_id", {"city_name": "北京"}, {"city_id": 110000}), say("北京的城市 ID 是 110000。")
    )
    assert kinds(findings(answered, catalog=_catalog()), "unused_output") == []
    failed = trace_of(call("beike_lookup_city_id", {"city_name": "北京"}, ERROR, error=True), say("查询失败"))
    assert kinds(findings(failed, catalog=_catalog()), "unused_output") == []


# --------------------------------------------------------------------------- options


def test_options_can_disable_a_detector_and_reject_unknown_names() -> None:
    trace = _detail_loop(2)
    assert kinds(findings(trace, alternating_loop__enabled=False), "alternating_loop") == []
    with pytest.raises(DetectorOptionError, match="unknown detector"):
        resolve_options({"no_such": {"x": 1}})
    with pytest.raises(DetectorOptionError, match="has no option"):
        resolve_options({"retry_storm": {"threshold": 1}})
    with pytest.raises(DetectorOptionError, match="expected an integer"):
        resolve_options({"retry_storm": {"failures": 2.5}})
    assert resolve_options({"retry_storm": {"failures": 5.0}})["retry_storm"]["failures"] == 5
