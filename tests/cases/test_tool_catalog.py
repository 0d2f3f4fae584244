"""The tool catalog model and the shipped catalog (cases/tools/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from tracekit.cases.catalog import Catalog, MockResponse, ToolSpec, load_catalog
from tracekit.cases.tool_schema import check_value
from tracekit.errors import CaseError

TOOLS_DIR = Path(__file__).resolve().parents[2] / "cases" / "tools"

#: Every tool name the seeds mention (grep of ../shared/seeds/*.txt), plus seed 003's registry.
SEED_TOOLS = {
    "search_flights", "search_hotels", "web_search", "maps_weather", "maps_text_search", "maps_around_search",
    "maps_direction_transit_integrated_by_address", "compute_google_maps_routes",
    "compute_google_maps_route_matrix", "taobao_search_products", "taobao_get_product_detail",
    "taobao_get_product_reviews", "beike_lookup_city_id", "beike_search_resale_housing",
    "beike_search_communities", "beike_get_community_detail", "zhihu_search", "zhihu_get_article_detail",
    "weibo_get_hot_search", "weibo_search_posts", "weibo_get_post_detail", "weibo_get_post_comments",
    "search_tripadvisor", "get_skill_document",
    "search", "calculator", "code_executor", "browser", "web_fetch", "memory_store", "safety_checker",
}  # fmt: skip


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(TOOLS_DIR)


def test_every_seed_tool_is_in_the_catalog(catalog: Catalog) -> None:
    assert set(catalog) >= SEED_TOOLS, sorted(SEED_TOOLS - set(catalog))


def test_every_tool_has_a_usable_schema_and_mock(catalog: Catalog) -> None:
    for tool in catalog.values():
        schema = tool.input_schema
        assert set(schema.get("required", [])) <= set(schema.get("properties", {})), tool.name
        assert tool.mocks, tool.name
        example = {name: "x" for name in schema.get("required", [])}
        mock = tool.mock_result(example)
        assert mock is not None, tool.name
        rendered = mock.render(example)
        if rendered.lstrip().startswith("{"):
            json.loads(rendered)


def test_dependencies_point_at_catalog_tools(catalog: Catalog) -> None:
    dependencies = catalog.dependencies()
    assert ("beike_search_resale_housing", "city_id", "beike_lookup_city_id", "city_id") in dependencies
    for tool, param, source, _ in dependencies:
        assert source in catalog and param in catalog[tool].input_schema["properties"], (tool, param)
        assert param in catalog[tool].id_params, (tool, param)


def test_region_and_kind_metadata(catalog: Catalog) -> None:
    assert catalog["beike_lookup_city_id"].kind == "lookup"
    assert catalog["beike_lookup_city_id"].output_ids == ["city_id"]
    assert {catalog[name].region for name in catalog if name.startswith("maps_")} == {"mainland"}
    assert catalog["compute_google_maps_routes"].region == "abroad"
    assert catalog["calculator"].suitability is not None
    assert "环比增长率" in catalog["calculator"].suitability.best_for


def test_beike_city_id_must_be_an_integer(catalog: Catalog) -> None:
    schema = catalog["beike_search_resale_housing"].input_schema
    assert check_value(schema, {"city_id": 110000, "district": "朝阳区"}) == []
    assert check_value(schema, {"city_id": "北京"}) == ["city_id: expected integer, got string '北京'"]


def test_mock_selection_prefers_params_match_then_the_default(catalog: Catalog) -> None:
    lookup = catalog["beike_lookup_city_id"]
    shanghai = lookup.mock_result({"city_name": "上海"})
    assert shanghai is not None and json.loads(shanghai.content)["city_id"] == 310000
    unknown = lookup.mock_result({"city_name": "火星"})
    assert unknown is not None and unknown.is_error
    assert "火星" in unknown.render({"city_name": "火星"})


def test_render_escapes_values_inside_json_strings() -> None:
    mock = MockResponse(content='{"q": "{{q}}", "n": {{n}}, "missing": "{{other}}"}')
    assert json.loads(mock.render({"q": 'say "hi"\n', "n": 3})) == {"q": 'say "hi"\n', "n": 3, "missing": ""}


def test_tool_spec_rejects_bad_metadata() -> None:
    base = {"name": "t", "description": "d", "kind": "search", "input_schema": {"type": "object"}}
    with pytest.raises(ValidationError, match="type: object"):
        ToolSpec.model_validate({**base, "input_schema": {"type": "array"}})
    with pytest.raises(ValidationError, match=r"tool\.output_path"):
        ToolSpec.model_validate({**base, "depends_on": {"x": "nodot"}})
    with pytest.raises(ValidationError):
        ToolSpec.model_validate({**base, "kind": "query"})


def test_a_tool_defined_twice_is_an_error(tmp_path: Path) -> None:
    text = (
        "family: f\ntools:\n  - {name: t, description: d, kind: search, input_schema: {type: object}}\n"
    )
    (tmp_path / "a.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(CaseError, match=r"b\.yaml:3: tools\[0\]\.name: tool 't' is defined twice"):
        load_catalog(tmp_path)
