"""The call graph: next, same and data edges (with key paths), and its networkx form."""

from __future__ import annotations

from tracekit.analyze.graph import build_graph

from .factories import build_trace, call, messages_of, user


def _graph():
    trace = build_trace(
        messages_of(
            [
                user("北京朝阳区有哪些二手房"),
                call("beike_lookup_city_id", {"city_name": "北京"}, {"city_id": 110000, "city_name": "北京"}),
                call(
                    "beike_search_resale_housing",
                    {"city_id": 110000, "district": "朝阳区"},
                    {"listings": [{"listing_id": "bj_001"}, {"listing_id": "bj_002"}]},
                ),
                call("beike_get_listing", {"listing_id": "bj_002"}, "房源 bj_002：3 室"),
                call("beike_lookup_city_id", {"city_name": "北京"}, {"city_id": 110000}),
                call("maps_text_search", {"keywords": "3 室"}, "{}"),
            ]
        )
    )
    return build_graph(trace.calls())


def test_nodes_carry_tool_hash_error_turn_and_history() -> None:
    graph = _graph()
    first = graph.node(0)
    assert (first.tool, first.is_error, first.turn, first.history) == ("beike_lookup_city_id", False, 1, False)
    assert first.args_hash == graph.node(3).args_hash != graph.node(1).args_hash


def test_next_and_same_edges() -> None:
    graph = _graph()
    assert [(e.source, e.target) for e in graph.next_edges] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert [(e.source, e.target) for e in graph.same_edges] == [(0, 3)]


def test_data_edges_name_the_key_paths_on_both_sides() -> None:
    edges = {(e.source, e.target, e.source_path, e.target_path) for e in _graph().data_edges}
    assert (0, 1, "city_id", "city_id") in edges
    assert (1, 2, "listings[1].listing_id", "listing_id") in edges
    # "北京" was in the lookup's result before the repeat: provenance, even for a repeated call.
    assert (0, 3, "city_name", "city_name") in edges
    # A plain-text result is searched as text; "3 室" occurs in it as a whole token.
    assert (2, 4, "", "keywords") in edges
    # Values never flow backwards in time.
    assert all(source < target for source, target, _, _ in edges)


def test_networkx_view() -> None:
    nx_graph = _graph().to_networkx()
    assert nx_graph.number_of_nodes() == 5
    assert nx_graph.nodes[2]["tool"] == "beike_get_listing"
    assert nx_graph.has_edge(0, 1, key="data") and nx_graph.has_edge(0, 3, key="same")
    assert nx_graph.edges[1, 2, "data"]["source_path"] == "listings[1].listing_id"
