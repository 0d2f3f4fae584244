"""Running tools the way the cases define them: the catalog's deterministic mock responses.

The reference agent and the example external agent execute every tool call here. What the model finally
sees may still be replaced by the case's intercepts in the proxy; the mocks are the "real" tool.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tracekit.cases.catalog import Catalog, ToolSpec


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool returned: content for the tool_result block and its is_error flag."""

    content: str
    is_error: bool = False


class MockToolExecutor:
    """Executes the tools offered by a case with the catalog's mocks.

    A call of a tool that is not offered, or of an offered tool without a mock that applies, gets an error
    result that says so (the model sees it, as it would see a tool failure).

    Example::

        tools = MockToolExecutor.for_case(library.catalog, case.context.tools)
        tools.run("search_flights", {"origin": "北京", "destination": "成都", "date": "2026-04-08"})
    """

    def __init__(self, specs: Mapping[str, ToolSpec]) -> None:
        self.specs = dict(specs)

    @classmethod
    def for_case(cls, catalog: Catalog, offered: list[str]) -> MockToolExecutor:
        """The executor for the tools a case offers (names missing from the catalog are skipped)."""
        return cls({name: catalog[name] for name in offered if name in catalog})

    def tool_params(self) -> list[dict[str, Any]]:
        """The offered tools in Anthropic form, in order."""
        return [spec.as_tool_param() for spec in self.specs.values()]

    def run(self, name: str, arguments: Any) -> ToolOutcome:
        """The result of calling tool ``name`` with ``arguments``."""
        spec = self.specs.get(name)
        if spec is None:
            offered = ", ".join(self.specs) or "none"
            return ToolOutcome(f"Error: unknown tool '{name}'. Available tools: {offered}", True)
        params = arguments if isinstance(arguments, Mapping) else {}
        if not isinstance(arguments, Mapping):
            return ToolOutcome(f"Error: arguments of {name} must be a JSON object", True)
        mock = spec.mock_result(params)
        if mock is None:
            shown = json.dumps(dict(params), ensure_ascii=False, sort_keys=True)
            return ToolOutcome(f"Error: {name} has no result for {shown}", True)
        return ToolOutcome(mock.render(params), mock.is_error)
