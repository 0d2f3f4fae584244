"""Tool inputs checked against the tool's JSON Schema, with the ``jsonschema`` library.

``jsonschema`` decides what is valid (the draft a schema declares, 2020-12 by default; formats are not
asserted). This module only words its errors the way case lints and parameter scores show them, each
prefixed by the value's path (``tags[1]: expected string, got number 1``), in the order of the value
(a key's problems before the next key's) and, at one place, in a fixed keyword order, so that the
messages are stable whatever the key order of the schema.

>>> check_value({"type": "object", "required": ["city"]}, {})
["missing required property 'city'"]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import ValidationError

#: Keyword ranks at one place of the value: the order its problems are reported in.
_RANK = {
    "type": 0, "enum": 1, "const": 2, "minLength": 3, "maxLength": 4, "pattern": 5,
    "minimum": 6, "maximum": 7, "exclusiveMinimum": 8, "exclusiveMaximum": 9, "required": 10,
    "properties": 11, "additionalProperties": 11, "minItems": 12, "maxItems": 13, "items": 14,
    "allOf": 15, "anyOf": 16, "oneOf": 17,
}  # fmt: skip
_OTHER = 18

_Order = tuple[tuple[int, int], ...]


def check_value(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """Every way ``value`` breaks ``schema``, as readable messages prefixed by the value's path."""
    # jsonschema takes about 0.1 s to import: loaded on first use, so that importing the case package
    # (every CLI command does) stays fast.
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import SchemaError, UnknownType

    try:
        validator = validators.validator_for(schema, default=Draft202012Validator)(schema)
        errors = list(validator.iter_errors(value))
    except (SchemaError, UnknownType, re.error) as exc:
        return [f"{path + ': ' if path else ''}the tool's input schema is invalid: {_first_line(exc)}"]
    found: dict[str, _Order] = {}
    for error in _without_shadowed(errors):
        for order, message in _messages(error, value, path):
            found.setdefault(message, order)
    return sorted(found, key=lambda message: found[message])


def property_schema(schema: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The schema of property ``name`` of an object schema; None when the schema does not allow it."""
    properties = schema.get("properties", {})
    if name in properties:
        return dict(properties[name])
    extra = schema.get("additionalProperties", True)
    if extra is False:
        return None
    return dict(extra) if isinstance(extra, dict) else {}


def _without_shadowed(errors: list[ValidationError]) -> Iterable[ValidationError]:
    """The errors, less those a wrong type makes moot: once a value has the wrong type, nothing else the
    same schema says about it is reported."""
    wrong_type = [
        (tuple(error.absolute_schema_path)[:-1], tuple(error.absolute_path))
        for error in errors
        if error.validator == "type"
    ]
    for error in errors:
        schema_path, instance_path = tuple(error.absolute_schema_path), tuple(error.absolute_path)
        if error.validator != "type" and any(
            schema_path[: len(node)] == node and instance_path[: len(place)] == place for node, place in wrong_type
        ):
            continue
        yield error


def _messages(error: ValidationError, root: Any, prefix: str) -> Iterable[tuple[_Order, str]]:
    path = _path(prefix, error.absolute_path)
    where = f"{path}: " if path else ""
    order = _order(error, root)
    keyword, expected, value = error.validator, error.validator_value, error.instance
    if keyword == "required":
        for position, name in enumerate(expected):
            if isinstance(value, dict) and name not in value:
                yield (*order, (_RANK["required"], position)), f"{where}missing required property {name!r}"
        return
    if keyword == "additionalProperties" and expected is False and isinstance(value, dict):
        schema = error.schema if isinstance(error.schema, dict) else {}
        patterns = list(schema.get("patternProperties", {}))
        keys = list(value)
        for name in keys:
            if name not in schema.get("properties", {}) and not any(re.search(p, name) for p in patterns):
                yield (
                    (*order, (_RANK["additionalProperties"], keys.index(name))),
                    f"{_path(path, [name])}: not a parameter of this tool (additionalProperties: false)",
                )
        return
    yield (*order, (_RANK.get(str(keyword), _OTHER), 0)), where + _wording(str(keyword), expected, value, error)


def _wording(keyword: str, expected: Any, value: Any, error: ValidationError) -> str:
    if keyword == "type":
        names = [expected] if isinstance(expected, str) else list(expected)
        return f"expected {' or '.join(names)}, got {_describe(value)}"
    words = {
        "enum": lambda: f"{value!r} is not one of {expected}",
        "const": lambda: f"{value!r} is not {expected!r}",
        "minLength": lambda: f"shorter than {expected} characters",
        "maxLength": lambda: f"longer than {expected} characters",
        "pattern": lambda: f"{value!r} does not match {expected!r}",
        "minimum": lambda: f"{value} is less than the minimum {expected}",
        "maximum": lambda: f"{value} is more than the maximum {expected}",
        "exclusiveMinimum": lambda: f"{value} is not more than {expected}",
        "exclusiveMaximum": lambda: f"{value} is not less than {expected}",
        "minItems": lambda: f"fewer than {expected} items",
        "maxItems": lambda: f"more than {expected} items",
        "anyOf": lambda: "does not match any of anyOf",
        "oneOf": lambda: "does not match exactly one of oneOf",
    }
    word = words.get(keyword)
    return word() if word is not None else error.message


def _order(error: ValidationError, root: Any) -> _Order:
    """Where the error's place comes in a walk over the value: by the position of each key or item on its
    path, and the rank of the keyword that led there. The error's own keyword is added by the caller."""
    steps: list[tuple[int, int]] = []
    value = root
    instance_path = list(error.absolute_path)
    schema_path = list(error.absolute_schema_path)[:-1]  # the last step is the error's own keyword
    while schema_path:
        keyword = schema_path.pop(0)
        if keyword in ("properties", "patternProperties") and schema_path:
            schema_path.pop(0)  # the property name (or pattern) in the schema
        if keyword in ("properties", "patternProperties", "additionalProperties") and instance_path:
            name = instance_path.pop(0)
            steps.append((_RANK["properties"], _position(value, name)))
            value = value[name] if isinstance(value, dict) else None
        elif keyword in ("items", "prefixItems") and instance_path:
            if keyword == "prefixItems" and schema_path:
                schema_path.pop(0)
            index = instance_path.pop(0)
            steps.append((_RANK["items"], index if isinstance(index, int) else 0))
            value = value[index] if isinstance(value, list) and isinstance(index, int) else None
        elif isinstance(keyword, int):
            steps.append((steps.pop()[0], keyword) if steps else (_OTHER, keyword))
        else:
            steps.append((_RANK.get(str(keyword), _OTHER), 0))
    return tuple(steps)


def _position(value: Any, name: Any) -> int:
    keys = list(value) if isinstance(value, dict) else []
    return keys.index(name) if name in keys else len(keys)


def _path(prefix: str, steps: Sequence[Any] | Iterable[Any]) -> str:
    path = prefix
    for step in steps:
        path += f"[{step}]" if isinstance(step, int) else (f".{step}" if path else str(step))
    return path


def _describe(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number" if isinstance(value, (int, float)) else type(value).__name__
    ) + f" {value!r}"[:80]


def _first_line(exc: Exception) -> str:
    return str(getattr(exc, "message", exc)).splitlines()[0] if str(exc) else type(exc).__name__
