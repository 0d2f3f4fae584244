"""``tool_intercept``: every result of the named tool(s) is replaced by one injected result.

The seeds' shape (工具拦截配置)::

    {"type": "tool_intercept", "intercept_tool": "search_flights",
     "inject_tool_result": {"is_error": true, "content": "Error: Invalid date parameter format..."}}

``intercept_tools`` (a list) may stand in for ``intercept_tool``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tracekit.errors import CaseError
from tracekit.intercepts.base import Replacement, SeenCall


class ToolIntercept:
    """Replaces every result of the tools in ``tools`` by ``replacement``."""

    def __init__(self, tools: Iterable[str], replacement: Replacement) -> None:
        self.tools = frozenset(tools)
        if not self.tools:
            raise CaseError("tool_intercept: give intercept_tool or intercept_tools")
        self.replacement = replacement

    def replacement_for(self, call: SeenCall) -> Replacement | None:
        """The injected result when ``call`` is to one of the intercepted tools."""
        return self.replacement if call.tool in self.tools else None

    @classmethod
    def from_config(cls, config: Mapping[str, Any], where: str = "tool_intercept") -> ToolIntercept:
        """Build from the seed's JSON (a dict; pydantic case models are dumped to one first)."""
        tools: list[str] = []
        if config.get("intercept_tool"):
            tools.append(str(config["intercept_tool"]))
        tools.extend(str(name) for name in config.get("intercept_tools") or [])
        if not tools:
            raise CaseError(f"{where}: give intercept_tool or intercept_tools")
        result = config.get("inject_tool_result")
        if not isinstance(result, Mapping):
            raise CaseError(f"{where}.inject_tool_result: expected an object with content and is_error")
        return cls(tools, replacement_from_config(result, "tool_intercept", f"{where}.inject_tool_result"))

    def __repr__(self) -> str:
        return f"ToolIntercept(tools={sorted(self.tools)!r}, is_error={self.replacement.is_error})"


def replacement_from_config(config: Mapping[str, Any], mode: str, where: str) -> Replacement:
    """A ``Replacement`` from ``{"content": ..., "is_error": ...}``."""
    if "content" not in config:
        raise CaseError(f"{where}: missing 'content'")
    content = config["content"]
    if not isinstance(content, (str, list)):
        raise CaseError(f"{where}.content: expected a string or a list of content blocks")
    return Replacement(content=content, is_error=bool(config.get("is_error", False)), mode=mode)
