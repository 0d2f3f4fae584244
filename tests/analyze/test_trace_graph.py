"""``trace_graph`` (the graph straight from a trace's records) equals ``build_graph(trace.calls(...))``."""

from __future__ import annotations

import pytest

from tracekit.analyze.graph import build_graph, trace_graph
from tracekit.trace import Trace

from .factories import build_trace, call, messages_of, user


def _trace() -> Trace:
    return build_trace(
        messages_of(
            [
                user("北京朝阳区有哪些二手房"),
                call("beike_lookup_city_id", {"city_name": "北京"}, {"city_id": 110000, "city_name": "北京"}),
                call("beike_search_resale_housing", {"city_id": 110000}, "Error: timeout", error=True),
                call("beike_search_resale_housing", {"city_id": 110000}, [{"type": "text", "text": "bj_001"}]),
                call("beike_lookup_city_id", {"city_name": "北京"}, {"city_id": 110000}),
            ]
        )
    )


@pytest.mark.parametrize("history", [0, 2, 100])
def test_trace_graph_equals_build_graph_of_the_paired_calls(history: int) -> None:
    trace = _trace()
    direct, paired = trace_graph(trace, history), build_graph(trace.calls(history))
    assert len(direct) == 4 and direct.nodes == paired.nodes
    assert direct.edges == paired.edges
    assert all(node.history for node in direct.nodes) == (history == 100)


def test_a_call_without_a_result_has_none() -> None:
    trace = _trace()
    trace.records = [r for r in trace.records if not (r.kind == "tool_result" and r.call_index == 3)]
    trace._by_kind = None
    node = trace_graph(trace).node(3)
    assert (node.has_result, node.result_text, node.result_turn) == (False, "", None)
    assert trace_graph(trace).nodes == build_graph(trace.calls()).nodes
