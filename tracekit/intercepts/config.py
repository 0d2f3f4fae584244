"""Loading intercepts and faults: from a case file, a Case model, or the seeds' raw JSON/YAML dicts.

Accepted shapes:

- a ``tracekit.cases.Case`` (its ``intercepts`` and ``faults``), or a case YAML/JSON file;
- a dict with ``intercepts`` and/or ``faults`` lists;
- a single intercept dict (``{"type": "tool_intercept", ...}``, as the seeds print them), or a list of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from tracekit.cases.loader import load_case
from tracekit.errors import CaseError
from tracekit.intercepts.base import ResultIntercept
from tracekit.intercepts.faults import FAULT_TYPES, Fault
from tracekit.intercepts.tool_intercept import ToolIntercept
from tracekit.intercepts.tool_mock import ToolMock
from tracekit.safe_yaml import safe_load_yaml


@dataclass
class InterceptConfig:
    """What a case asks the proxy to do: tool-result intercepts and transport faults."""

    intercepts: list[ResultIntercept] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    case_id: str | None = None

    @property
    def empty(self) -> bool:
        """Whether there is nothing to apply."""
        return not self.intercepts and not self.faults


def intercept_from(config: Any, where: str = "intercept") -> ResultIntercept:
    """One intercept from a seed dict, a case model, or an object that already has ``replacement_for``."""
    if isinstance(config, ResultIntercept):
        return config
    data = _as_dict(config)
    kind = data.get("type")
    if kind == "tool_intercept":
        return ToolIntercept.from_config(data, where)
    if kind == "tool_mock":
        return ToolMock.from_config(data, where)
    raise CaseError(f"{where}.type: expected 'tool_intercept' or 'tool_mock', got {kind!r}")


def config_from(value: Any, where: str = "case") -> InterceptConfig:
    """An ``InterceptConfig`` from any accepted shape (see the module docstring)."""
    if isinstance(value, InterceptConfig):
        return value
    if hasattr(value, "intercepts") and hasattr(value, "faults") and not isinstance(value, Mapping):
        return InterceptConfig(
            [intercept_from(item, f"{where}.intercepts[{n}]") for n, item in enumerate(value.intercepts)],
            [Fault.from_config(_as_dict(item), f"{where}.faults[{n}]") for n, item in enumerate(value.faults)],
            getattr(value, "id", None),
        )
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        merged = InterceptConfig()
        for number, item in enumerate(value):
            part = config_from(item, f"{where}[{number}]")
            merged.intercepts += part.intercepts
            merged.faults += part.faults
        return merged
    data = _as_dict(value)
    if data.get("type") in ("tool_intercept", "tool_mock"):
        return InterceptConfig([intercept_from(data, where)])
    if data.get("type") in FAULT_TYPES:
        return InterceptConfig(faults=[Fault.from_config(data, where)])
    if "type" in data:
        raise CaseError(f"{where}.type: expected tool_intercept, tool_mock or a fault type, got {data['type']!r}")
    intercepts = data.get("intercepts") or []
    faults = data.get("faults") or []
    if not isinstance(intercepts, list) or not isinstance(faults, list):
        raise CaseError(f"{where}: 'intercepts' and 'faults' must be lists")
    return InterceptConfig(
        [intercept_from(item, f"{where}.intercepts[{n}]") for n, item in enumerate(intercepts)],
        [Fault.from_config(_as_dict(item), f"{where}.faults[{n}]") for n, item in enumerate(faults)],
        data.get("id") if isinstance(data.get("id"), str) else None,
    )


def load_intercept_config(path: str | Path) -> InterceptConfig:
    """Read a case file (validated through ``tracekit.cases`` when it is a full case) or a raw JSON/YAML
    intercept file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CaseError(f"{path}: cannot read ({exc.strerror})") from exc
    if path.suffix == ".json":
        try:
            raw = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise CaseError(f"{path}: not valid JSON: {exc}") from exc
    else:
        raw = safe_load_yaml(text, str(path), CaseError)
    if isinstance(raw, Mapping) and "id" in raw and "input" in raw and path.suffix != ".json":
        return config_from(load_case(path), str(path))
    if not isinstance(raw, (Mapping, list)) or (isinstance(raw, Mapping) and not _CONFIG_KEYS & raw.keys()):
        kinds = {str: "a string", int: "a number", float: "a number", bool: "true or false", type(None): "null"}
        found = (f"an object with keys {', '.join(sorted(map(str, raw)))}" if isinstance(raw, Mapping)
                 else kinds.get(type(raw), type(raw).__name__))  # fmt: skip
        raise CaseError(f"{path}: not a case or an intercept file: found {found}; expected a case (id, input, ...) "
                        "or an object with 'intercepts' and/or 'faults' lists, or an intercept with a 'type'")
    return config_from(raw, str(path))


#: The keys one of which an intercept file's top-level object has (anything else is not one).
_CONFIG_KEYS = {"intercepts", "faults", "type", "id"}


def _as_dict(value: Any) -> dict[str, Any]:
    if hasattr(value, "model_dump"):
        dumped = value.model_dump(mode="json", exclude_none=True, by_alias=False)
        if isinstance(dumped, dict):
            return dumped
    if isinstance(value, Mapping):
        return dict(value)
    raise CaseError(f"expected an object, got {type(value).__name__}")
