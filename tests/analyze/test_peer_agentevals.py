"""Trajectory order modes follow agentevals' published semantics (issue 16, item 7).

The scenarios are those of langchain-ai/agentevals ``python/tests/test_trajectory.py`` (read at commit
946ad15b9f2ce9bc9843edd2bb773bd07d78ca7e), translated into transcripts written here as test inputs: the
``outputs`` are the agent's calls (tool calls in one assistant message are one turn), the
``reference_outputs`` the case's ``expect.order.tools``. agentevals' ``tool_args_match_mode`` maps onto
expected calls: ``exact`` is ``args: {exact: {...}}``, ``ignore`` the tool name alone, ``superset`` (the call
has at least these arguments) per-argument matchers, ``subset`` (the call has no argument beyond these, each
with this value) per-argument matchers that also accept an absent argument plus ``no_extra_args``; the
per-tool ``tool_args_match_overrides={"get_weather": "ignore"}`` is the tool name alone.

One difference, on purpose: agentevals' ``strict`` compares messages (two calls in one message differ from
the same calls in two messages); tracekit's expected trajectory is a list of calls, so it compares calls, in
order, letting calls issued together in one turn come in any order among themselves.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracekit.analyze.binding import CaseRun, history_length
from tracekit.analyze.checks import evaluate_expect
from tracekit.analyze.graph import build_graph
from tracekit.cases import Case

from .factories import Call, Turn, call, case_trace, parallel

MODES = ("unordered", "superset", "subset", "strict")


def weather(city: str) -> Call:
    return Call("get_weather", {"city": city}, f"weather in {city}")


def exact(city: str) -> dict[str, Any]:
    return {"tool": "get_weather", "args": {"exact": {"city": city}}}


def order_result(mode: str, expected: list[Any], steps: list[Turn], extra: dict[str, Any] | None = None) -> str:
    """The result of the case's order check for the agent's ``steps``."""
    case = Case.model_validate(
        {
            "id": "B2-TC-98", "dimension": "B2", "category": "TC", "title": "轨迹", "scoring": "auto",
            "seed": {"file": "test", "section": "test", "number": 1}, "input": {"user": "What is the weather?"},
            "expect": {"order": {"mode": mode, "tools": expected}, **(extra or {})},
        }
    )  # fmt: skip
    trace = case_trace(case, steps)
    history = history_length(case)
    run = CaseRun(trace, case, build_graph(trace.calls(history)), history)
    [check] = [check for check in evaluate_expect(run) if check.name.startswith("order:")]
    return check.result


def results(expected: list[Any], steps: list[Turn]) -> dict[str, bool]:
    return {mode: order_result(mode, expected, steps) == "pass" for mode in MODES}


def test_trajectory_match() -> None:
    steps = [Turn(None, [Call("get_weather", {"city": "San Francisco"}, "It's 80 degrees and sunny in SF.")])]
    assert results([exact("San Francisco")], steps) == dict.fromkeys(MODES, True)


def test_trajectory_with_different_tool_message_order() -> None:
    steps = [parallel(weather("SF"), weather("London"))]
    assert results([exact("London"), exact("SF")], steps) == dict.fromkeys(MODES, True)


def test_trajectory_with_different_message_count() -> None:
    steps = [Turn(None, [weather("SF")]), Turn(None, [weather("London")])]
    assert results([exact("London"), exact("SF")], steps) == {
        "unordered": True, "superset": True, "subset": True, "strict": False,
    }  # fmt: skip


def test_trajectory_subset_tool_call() -> None:
    steps = [Turn(None, [weather("SF")])]
    assert results([exact("London"), exact("SF")], steps) == {
        "unordered": False, "superset": False, "subset": True, "strict": False,
    }  # fmt: skip


def test_exact_matcher_with_different_called_tools() -> None:
    steps = [Turn(None, [weather("SF")])]
    expected = [{"tool": "accuweather_forecast", "args": {"exact": {"city": "San Francisco"}}}]
    assert results(expected, steps) == dict.fromkeys(MODES, False)


def test_trajectory_with_extra_tool_calls_and_override() -> None:
    # Calls are counted: one expected get_weather does not cover two calls of it.
    steps = [parallel(weather("San Francisco"), weather("London"))]
    assert results(["get_weather"], steps) == {
        "unordered": False, "superset": True, "subset": False, "strict": False,
    }  # fmt: skip


def test_trajectory_with_subset_tool_calls_and_override() -> None:
    steps = [Turn(None, [weather("SF and London")])]
    assert results(["get_weather", "get_weather"], steps) == {
        "unordered": False, "superset": False, "subset": True, "strict": False,
    }  # fmt: skip


FLIGHT = "get_flight_info"


def _by_args_mode(mode: str, reference: dict[str, Any]) -> Any:
    if mode == "exact":
        return {"tool": FLIGHT, "args": {"exact": reference}}
    if mode == "ignore":
        return FLIGHT
    if mode == "superset":
        return {"tool": FLIGHT, "args": {key: {"exact": value} for key, value in reference.items()}}
    optional = {key: {"any_of": [{"exact": value}, {"present": False}]} for key, value in reference.items()}
    return {"tool": FLIGHT, "args": optional, "no_extra_args": True}


@pytest.mark.parametrize(
    ("actual", "reference", "expected"),
    [
        # test_tool_args_match_mode_superset
        ({"is_cool": True, "flight_no": "LX0112"}, {"flight_no": "LX0112"},
         {"exact": False, "ignore": True, "subset": False, "superset": True}),
        # test_tool_args_match_mode_subset
        ({"flight_no": "LX0112"}, {"flight_no": "LX0112", "foo": "bar"},
         {"exact": False, "ignore": True, "subset": True, "superset": False}),
        # test_tool_args_match_mode_exact
        ({"flight_no": "LX0112"}, {"flight_no": "LX0112"},
         {"exact": True, "ignore": True, "subset": True, "superset": True}),
    ],
)  # fmt: skip
def test_tool_args_match_modes(actual: dict[str, Any], reference: dict[str, Any], expected: dict[str, bool]) -> None:
    steps = [call(FLIGHT, actual, "Your flight is at 10:00 AM.")]
    # agentevals' default trajectory mode is strict
    got = {mode: order_result("strict", [_by_args_mode(mode, reference)], steps) == "pass" for mode in expected}
    assert got == expected


def test_arguments_are_checked_in_the_subset_direction_too() -> None:
    # subset: every call of the agent must satisfy a distinct expected call, arguments included.
    steps = [Turn(None, [weather("SF")]), Turn(None, [weather("Paris")])]
    assert order_result("subset", [exact("SF"), exact("London")], steps) == "fail"
    assert order_result("subset", [exact("SF"), exact("London"), exact("Paris")], steps) == "pass"


def test_each_expected_call_needs_a_call_of_its_own() -> None:
    # Two expected calls of one tool are not both satisfied by one call (required calls and order alike).
    steps = [Turn(None, [weather("SF")])]
    case_calls = {"calls": [{"tool": "get_weather"}, {"tool": "get_weather"}]}
    case = Case.model_validate(
        {
            "id": "B2-TC-98", "dimension": "B2", "category": "TC", "title": "轨迹", "scoring": "auto",
            "seed": {"file": "test", "section": "test", "number": 1}, "input": {"user": "What is the weather?"},
            "expect": case_calls,
        }
    )  # fmt: skip
    trace = case_trace(case, steps)
    run = CaseRun(trace, case, build_graph(trace.calls(1)), 1)
    results_by_name = {check.name: check for check in evaluate_expect(run)}
    assert results_by_name["calls[0]:get_weather"].result == "pass"
    second = results_by_name["calls[1]:get_weather"]
    assert second.result == "fail" and "a call of its own" in second.evidence
    both = case_trace(case, [Turn(None, [weather("SF")]), Turn(None, [weather("London")])])
    run = CaseRun(both, case, build_graph(both.calls(1)), 1)
    assert all(check.result == "pass" for check in evaluate_expect(run))
    assert order_result("superset", ["get_weather", "get_weather"], steps) == "fail"  # multisets, not sets
