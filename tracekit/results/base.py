"""The base of the analyze JSON's models: how they read, write and describe themselves.

Every model of ``tracekit.results.model`` and ``tracekit.results.summary`` derives from ``ResultModel``:

- keys the model does not declare are kept (``extra="allow"``): the JSON is a contract that only grows, so
  a reader of an older tracekit keeps what a newer one wrote, and a producer's new key is not lost;
- names that are not Python identifiers (``pass``, ``pass^k``) are declared under an alias and written
  under it;
- a field that is sometimes left out of the JSON (a check's ``calls`` when it names none, a verdict's
  ``parts`` when the case does not use the judge) is declared with ``omit_if_none`` / ``omit_if_empty``,
  so the model writes exactly the keys the contract shows, in the order it declares them.

``to_json_bytes`` is the one writer of a model: orjson over the plain values, so that numbers, Chinese text
and key order come out exactly as they always have.
"""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

#: orjson options of every results file (integer dict keys, e.g. call indexes, are written as strings).
JSON_OPTIONS = orjson.OPT_NON_STR_KEYS

_NAMES: dict[tuple[type, str], str] = {}

Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
"""A JSON number, kept as the producer gave it (an integer stays an integer: ``0`` is not written ``0.0``)."""


class ResultModel(BaseModel):
    """Base of the analyze JSON's models (see the module docstring)."""

    model_config = ConfigDict(
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    def __getitem__(self, key: str) -> Any:
        """JSON-style read access, for scripts and tests: ``entry["verdict"]["result"]`` reads like the file."""
        name = _NAMES.get((type(self), key))
        if name is None:
            name = key
            for field_name, info in type(self).model_fields.items():
                if info.alias == key:
                    name = field_name
            _NAMES[(type(self), key)] = name
        if name in type(self).model_fields:
            return getattr(self, name)
        extra = self.__pydantic_extra__ or {}
        if key in extra:
            return extra[key]
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]``, or ``default`` when the JSON has no such key."""
        try:
            return self[key]
        except KeyError:
            return default

    def to_plain(self) -> dict[str, Any]:
        """The model as plain JSON values (dicts, lists, strings, numbers), keys in declaration order."""
        return self.model_dump(mode="python", by_alias=True)

    def to_json_bytes(self, indent: bool = False) -> bytes:
        """The model as UTF-8 JSON (compact unless ``indent``), as the analyze JSON writes it."""
        option = JSON_OPTIONS | orjson.OPT_INDENT_2 if indent else JSON_OPTIONS
        return orjson.dumps(self.to_plain(), option=option)


def omit_if_none(default: Any = None, description: str = "", **kwargs: Any) -> Any:
    """A field left out of the JSON when it is None (``Field`` with ``exclude_if``)."""
    return Field(default=default, description=description, exclude_if=_is_none, **kwargs)


def omit_if_empty(description: str = "", **kwargs: Any) -> Any:
    """A list field left out of the JSON when it is empty (``Field`` with ``exclude_if``)."""
    return Field(default_factory=list, description=description, exclude_if=_is_empty, **kwargs)


def _is_none(value: Any) -> bool:
    return value is None


def _is_empty(value: Any) -> bool:
    return not value
