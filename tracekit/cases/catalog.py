"""The tool catalog: every tool the cases offer, with its JSON Schema, metadata and mock responses.

One YAML file per tool family under ``cases/tools/`` (``amap.yaml``, ``flights.yaml``, ...)::

    family: beike
    source: "why the schema looks like this (public schema URL, or 'shaped after the seeds')"
    tools:
      - name: beike_lookup_city_id
        description: 根据城市名查询贝壳城市 ID
        kind: lookup
        region: mainland
        input_schema: {type: object, properties: {city_name: {type: string}}, required: [city_name]}
        output_ids: [city_id]
        mocks:
          - params_match: {city_name: 北京}
            content: '{"city_id": 110000, "city_name": "北京", "province": "北京市"}'

The metadata feeds the analyzers: ``kind: lookup`` with ``output_ids`` for ``unused_output``,
``id_params`` for ``ungrounded_argument``, ``depends_on`` for ``order_violation``, ``region`` for
mainland/abroad routing checks, ``suitability`` for seed 003's three-tier selection score.

Paths into results (``output_ids``, ``depends_on``) are dotted, with ``[]`` for "any element":
``city_id``, ``items[].product_id``. Mock contents may hold ``{{param}}`` placeholders, filled from the
call's arguments by ``MockResponse.render``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from tracekit.cases.base import StrictModel
from tracekit.cases.yaml_source import Problem, display_path, problems_error, read_yaml, validate_document
from tracekit.errors import CaseError

ToolKind = Literal["lookup", "search", "detail", "action"]
Region = Literal["mainland", "abroad", "global"]


_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class Suitability(StrictModel):
    """Seed 003's TOOL_SUITABILITY entry: what a tool is best / acceptable / wrong for (verbatim)."""

    best_for: list[str] = Field(default_factory=list, description="Tasks this tool is the best choice for.")
    acceptable_for: list[str] = Field(default_factory=list, description="Tasks it can do, not ideally.")
    wrong_for: list[str] = Field(default_factory=list, description="Tasks it is the wrong choice for.")


class MockResponse(StrictModel):
    """A deterministic result of a tool. The first mock whose ``params_match`` is contained in the call's
    input answers; a mock without ``params_match`` answers any other call."""

    params_match: dict[str, Any] | None = Field(
        default=None, description="Key/values the call's input must contain; null matches every call."
    )
    content: str = Field(description="The tool_result content (usually a JSON document as a string).")
    is_error: bool = Field(default=False, description="The tool_result's is_error flag.")

    def render(self, params: Mapping[str, Any]) -> str:
        """The content with ``{{name}}`` placeholders replaced by the call's arguments (JSON-escaped, so a
        placeholder inside a JSON string stays valid JSON); a missing argument renders as empty."""

        def value(match: re.Match[str]) -> str:
            argument = params.get(match[1], "")
            text = argument if isinstance(argument, str) else json.dumps(argument, ensure_ascii=False)
            return json.dumps(text, ensure_ascii=False)[1:-1]

        return _PLACEHOLDER.sub(value, self.content)

    def matches(self, params: Mapping[str, Any]) -> bool:
        """Whether this mock answers a call with these arguments."""
        if self.params_match is None:
            return True
        return all(key in params and _same(params[key], value) for key, value in self.params_match.items())


class ToolSpec(StrictModel):
    """One tool: what the model sees (name, description, input_schema) plus analyzer metadata."""

    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$", description="Tool name as the model calls it.")
    description: str = Field(description="Tool description shown to the model.")
    input_schema: dict[str, Any] = Field(description="JSON Schema of the tool's input (type: object).")
    kind: ToolKind = Field(description="lookup (name -> id), search (list), detail (by id), action (does).")
    id_params: list[str] = Field(
        default_factory=list, description="Input parameters that carry identifiers (checked for grounding)."
    )
    output_ids: list[str] = Field(
        default_factory=list, description="Paths of identifier values in the result (e.g. 'city_id')."
    )
    depends_on: dict[str, str] = Field(
        default_factory=dict,
        description="Parameter -> 'tool.output_path' it must come from, e.g. "
        "{city_id: beike_lookup_city_id.city_id}.",
    )
    region: Region = Field(default="global", description="Where the tool works: mainland China, abroad, both.")
    suitability: Suitability | None = Field(default=None, description="Seed 003 suitability tiers.")
    source: str | None = Field(default=None, description="Where the schema comes from (public URL or seed).")
    mocks: list[MockResponse] = Field(default_factory=list, description="Deterministic responses, in order.")

    @field_validator("input_schema")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("type") != "object":
            raise ValueError("input_schema must have type: object")
        return value

    @field_validator("depends_on")
    @classmethod
    def _dotted(cls, value: dict[str, str]) -> dict[str, str]:
        for param, ref in value.items():
            if "." not in ref:
                raise ValueError(f"depends_on.{param}: expected 'tool.output_path', got {ref!r}")
        return value

    def mock_result(self, params: Mapping[str, Any]) -> MockResponse | None:
        """The mock that answers a call with ``params``, or None when the tool has none that applies."""
        return next((mock for mock in self.mocks if mock.matches(params)), None)

    def as_tool_param(self) -> dict[str, Any]:
        """The tool as the Anthropic Messages API takes it (name, description, input_schema)."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


class ToolFamily(StrictModel):
    """One catalog file: a family of tools from one provider (Amap, beike, ...)."""

    family: str = Field(description="Family name, usually the file's stem.")
    source: str | None = Field(default=None, description="Where the family's schemas come from.")
    tools: list[ToolSpec] = Field(min_length=1, description="The family's tools.")


class Catalog(Mapping[str, ToolSpec]):
    """Every tool of the catalog by name (a read-only mapping), with the file each came from."""

    def __init__(self, tools: Mapping[str, ToolSpec] | None = None, files: Mapping[str, Path] | None = None):
        self._tools: dict[str, ToolSpec] = dict(tools or {})
        self.files: dict[str, Path] = dict(files or {})

    def __getitem__(self, name: str) -> ToolSpec:
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def add(self, tool: ToolSpec, file: Path | None = None) -> None:
        """Add a tool; a name already present is a ValueError naming both files."""
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is defined twice ({self.files.get(tool.name)} and {file})")
        self._tools[tool.name] = tool
        if file is not None:
            self.files[tool.name] = file

    def tool_params(self, names: list[str]) -> list[dict[str, Any]]:
        """The named tools in API form, skipping names not in the catalog."""
        return [self._tools[name].as_tool_param() for name in names if name in self._tools]

    def dependencies(self) -> list[tuple[str, str, str, str]]:
        """Every declared dependency as (tool, param, source_tool, source_path)."""
        result = []
        for tool in self._tools.values():
            for param, ref in tool.depends_on.items():
                source_tool, _, source_path = ref.partition(".")
                result.append((tool.name, param, source_tool, source_path))
        return result


def load_catalog(directory: str | Path) -> Catalog:
    """Load every ``*.yaml`` of a tool catalog directory. Errors are CaseError naming file, line, field."""
    catalog = Catalog()
    problems = load_catalog_into(Path(directory), catalog)
    if problems:
        raise problems_error(problems)
    return catalog


def load_catalog_into(directory: Path, catalog: Catalog) -> list[Problem]:
    """Add every tool of the ``*.yaml`` files of ``directory`` to ``catalog``; the problems found on the way."""
    problems: list[Problem] = []
    for path in sorted(directory.glob("*.yaml")):
        try:
            document = read_yaml(path)
            family = validate_document(document, ToolFamily)
        except CaseError as exc:
            problems += getattr(exc, "problems", [Problem(display_path(path), None, None, str(exc))])
            continue
        for index, tool in enumerate(family.tools):
            try:
                catalog.add(tool, path)
            except ValueError as exc:
                line, field_path = document.line_of(("tools", index, "name"))
                problems.append(Problem(document.name, line, field_path, str(exc)))
    return problems


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, ensure_ascii=False) == json.dumps(b, sort_keys=True, ensure_ascii=False)
