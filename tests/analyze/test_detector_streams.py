"""Detectors fed one call at a time: the fused pass, live reporting, and the extension points."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tracekit.analyze.config import PRESETS
from tracekit.analyze.detectors import (
    REGISTRY,
    DetectorContext,
    DetectorRun,
    DetectorStream,
    Finding,
    detect,
    detector,
    resolve_options,
    run_detectors,
)
from tracekit.analyze.graph import CallNode, trace_graph
from tracekit.trace import Trace

from .factories import Call, build_trace, call, messages_of, parallel, say, user

#: Option sets that reach every branch of the loop detectors (windows, runs, outcomes, periods).
VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "default": {},
    **PRESETS,
    "consecutive": {
        "repeated_call": {"consecutive": True, "same_outcome": True, "agent_text_breaks": True},
        "retry_storm": {"consecutive": True, "failures": 2, "agent_text_breaks": True},
        "alternating_loop": {"same_outcome": True, "agent_text_breaks": True, "max_period": 6},
    },
    "loose": {
        "repeated_call": {"require_success": False, "min_repeats": 2, "reset_on_user_message": True},
        "retry_storm": {"failures": 2, "reset_on_user_message": True},
        "alternating_loop": {"min_repeats": 1, "min_period": 1, "reset_on_user_message": True},
    },
}


def random_trace(seed: int) -> Trace:
    """A session drawn from few tools and arguments, so that repeats, cycles and retries are common."""
    rng = random.Random(seed)
    steps: list[Any] = [user("帮我查一下 city_id")]
    for _ in range(rng.randint(3, 40)):
        roll = rng.random()
        if roll < 0.08:
            steps.append(user(rng.choice(["继续", "换一个"])))
        elif roll < 0.14:
            steps.append(say(rng.choice(["让我想想", "好的"])))
        else:
            calls = [
                Call(
                    rng.choice(["lookup_city", "search", "detail"]),
                    {"city_id": rng.choice([110000, 310000])} if rng.random() < 0.5 else {"q": rng.choice("ab")},
                    rng.choice(['{"city_id": 110000}', "{}", "找到 2 条"]),
                    rng.random() < 0.2,
                )
                for _ in range(2 if rng.random() < 0.1 else 1)
            ]
            steps.append(parallel(*calls, text="查询中" if rng.random() < 0.3 else None))
    return build_trace(messages_of(steps))


def live_findings(trace: Trace, options: dict[str, dict[str, Any]]) -> tuple[list[Finding], list[Finding]]:
    """(what a live run reported call by call, what it reports at the end)."""
    graph = trace_graph(trace)
    run = DetectorRun(DetectorContext(graph, trace, live=True), options)
    reported = [finding for node in graph.nodes for finding in run.observe(node)]
    return reported, run.finish()


def identity(finding: Finding) -> tuple[str, int]:
    return finding.kind, (finding.calls or finding.messages or [-1])[0]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_live_and_offline_runs_give_the_same_findings(variant: str) -> None:
    options = resolve_options(VARIANTS[variant])
    checked = 0
    for seed in range(150):
        trace = random_trace(seed)
        offline = run_detectors(DetectorContext(trace_graph(trace), trace), options)
        _, fused = detect(trace, options)
        reported, final = live_findings(trace, options)
        assert [f.to_dict() for f in fused] == [f.to_dict() for f in offline], seed
        assert [f.to_dict() for f in final] == [f.to_dict() for f in offline], seed
        # Whatever was reported live is a finding of the trace, and its last report is the final one.
        last = {identity(f): f.to_dict() for f in reported}
        final_by_identity = {identity(f): f.to_dict() for f in final}
        for key, value in last.items():
            assert final_by_identity.get(key) == value, (seed, key)
        checked += len(last)
    assert checked > 0  # the corpus does exercise live reports


def test_a_loop_is_reported_while_it_runs_not_only_at_the_end() -> None:
    trace = build_trace(messages_of([user("查天气"), *[call(name, {"city": "北京"}, "晴") for name in ["a", "b"] * 6]]))
    options = resolve_options({"alternating_loop": {"min_repeats": 3}, "repeated_call": {"enabled": False}})
    graph = trace_graph(trace)
    run = DetectorRun(DetectorContext(graph, trace, live=True), options)
    reports = [i for i, node in enumerate(graph.nodes) if run.observe(node)]
    assert reports == [5, 7, 9, 11]  # a b a b a b: the third round completes the cycle
    (finding,) = [f for f in run.finish() if f.kind == "alternating_loop"]
    assert finding.calls == [node.index for node in graph.nodes] and "6 times" in finding.message


def test_offline_streams_skip_the_live_reports() -> None:
    trace = build_trace(messages_of([user("查"), *[call("lookup", {"q": "x"}, "ok") for _ in range(4)]]))
    graph = trace_graph(trace)
    run = DetectorRun(DetectorContext(graph, trace), resolve_options())
    assert [run.observe(node) for node in graph.nodes] == [[], [], [], []]
    assert [f.kind for f in run.finish()] == ["repeated_call"]


def test_a_stream_and_a_function_detector_registered_by_decorator_run_in_the_fused_pass() -> None:
    @detector("test_searches", limit=1)
    class Searches(DetectorStream):
        def __init__(self, context: DetectorContext, options: dict[str, Any]) -> None:
            super().__init__(context, options)
            self.calls: list[int] = []

        def observe(self, node: CallNode) -> list[Finding]:
            if node.tool == "search":
                self.calls.append(node.index)
            return []

        def finish(self) -> list[Finding]:
            if len(self.calls) <= self.options["limit"]:
                return []
            return [Finding("test_searches", "warning", self.calls, "search less")]

    @detector("test_calls")
    def calls(context: DetectorContext) -> list[Finding]:
        """Every call, as one finding."""
        return [Finding("test_calls", "info", [n.index for n in context.graph.nodes], f"{len(context.graph)}")]

    try:
        trace = build_trace(messages_of([user("找"), call("search", {"q": 1}), call("search", {"q": 2})]))
        graph, found = detect(trace, resolve_options())
        assert [(f.kind, f.calls) for f in found] == [("test_searches", [0, 1]), ("test_calls", [0, 1])]
        assert len(graph) == 2 and REGISTRY["test_calls"].description == "Every call, as one finding."
    finally:
        del REGISTRY["test_searches"], REGISTRY["test_calls"]
