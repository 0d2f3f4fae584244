"""A small JSON Schema checker for tool inputs: the subset tool schemas use.

Supported keywords: ``type`` (also a list), ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties`` (bool or schema), ``items``, ``minimum``/``maximum``,
``exclusiveMinimum``/``exclusiveMaximum``, ``minLength``/``maxLength``, ``pattern``, ``minItems``/
``maxItems``, ``anyOf``/``oneOf``/``allOf``. Unknown keywords (``description``, ``format``, ``default``)
are ignored, as a validator that does not assert formats would.

>>> check_value({"type": "object", "required": ["city"]}, {})
["missing required property 'city'"]
"""

from __future__ import annotations

import re
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def check_value(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """Every way ``value`` breaks ``schema``, as readable messages prefixed by the value's path."""
    where = f"{path}: " if path else ""
    problems: list[str] = []
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, name) for name in names):
            return [f"{where}expected {' or '.join(names)}, got {_describe(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}{value!r} is not one of {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{where}{value!r} is not {schema['const']!r}")
    if isinstance(value, str):
        problems += _check_string(schema, value, where)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        problems += _check_number(schema, value, where)
    if isinstance(value, dict):
        problems += _check_object(schema, value, path)
    if isinstance(value, list):
        problems += _check_array(schema, value, path, where)
    problems += _check_combinators(schema, value, path, where)
    return problems


def property_schema(schema: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The schema of property ``name`` of an object schema; None when the schema does not allow it."""
    properties = schema.get("properties", {})
    if name in properties:
        return dict(properties[name])
    extra = schema.get("additionalProperties", True)
    if extra is False:
        return None
    return dict(extra) if isinstance(extra, dict) else {}


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, object))


def _describe(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number" if isinstance(value, (int, float)) else type(value).__name__
    ) + f" {value!r}"[:80]


def _check_string(schema: dict[str, Any], value: str, where: str) -> list[str]:
    problems = []
    if "minLength" in schema and len(value) < schema["minLength"]:
        problems.append(f"{where}shorter than {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        problems.append(f"{where}longer than {schema['maxLength']} characters")
    if "pattern" in schema and re.search(schema["pattern"], value) is None:
        problems.append(f"{where}{value!r} does not match {schema['pattern']!r}")
    return problems


def _check_number(schema: dict[str, Any], value: float, where: str) -> list[str]:
    problems = []
    if "minimum" in schema and value < schema["minimum"]:
        problems.append(f"{where}{value} is less than the minimum {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        problems.append(f"{where}{value} is more than the maximum {schema['maximum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        problems.append(f"{where}{value} is not more than {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        problems.append(f"{where}{value} is not less than {schema['exclusiveMaximum']}")
    return problems


def _check_object(schema: dict[str, Any], value: dict[str, Any], path: str) -> list[str]:
    problems = []
    prefix = f"{path}." if path else ""
    for name in schema.get("required", []):
        if name not in value:
            problems.append(f"{path + ': ' if path else ''}missing required property {name!r}")
    for name, item in value.items():
        sub = property_schema(schema, name)
        if sub is None:
            problems.append(f"{prefix}{name}: not a parameter of this tool (additionalProperties: false)")
        elif sub:
            problems += check_value(sub, item, f"{prefix}{name}")
    return problems


def _check_array(schema: dict[str, Any], value: list[Any], path: str, where: str) -> list[str]:
    problems = []
    if "minItems" in schema and len(value) < schema["minItems"]:
        problems.append(f"{where}fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        problems.append(f"{where}more than {schema['maxItems']} items")
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            problems += check_value(items, item, f"{path}[{index}]")
    return problems


def _check_combinators(schema: dict[str, Any], value: Any, path: str, where: str) -> list[str]:
    problems = []
    for sub in schema.get("allOf", []):
        problems += check_value(sub, value, path)
    for keyword, wanted in (("anyOf", None), ("oneOf", 1)):
        if keyword in schema:
            passing = sum(not check_value(sub, value, path) for sub in schema[keyword])
            if passing == 0 or (wanted is not None and passing != wanted):
                problems.append(f"{where}does not match {'exactly one' if wanted else 'any'} of {keyword}")
    return problems
