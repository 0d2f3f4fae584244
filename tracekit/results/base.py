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

from collections.abc import Callable, Iterable
from typing import Annotated, Any, Self

import orjson
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

#: orjson options of every results file (integer dict keys, e.g. call indexes, are written as strings).
JSON_OPTIONS = orjson.OPT_NON_STR_KEYS

_NAMES: dict[tuple[type, str], str] = {}
_new = object.__new__
_ALL_FIELDS: dict[type, set[str]] = {}
# The slot setters ``object.__setattr__`` finds for the attributes a built model gets, called directly: a
# third cheaper per model, and ``built_many`` makes one per tool call.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__

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

    @classmethod
    def built(cls, **values: Any) -> Self:
        """The model from values the analysis made, already of their fields' types: every field given, by
        name and in declaration order, nested models as models. Not validated (validation is for reading a
        file someone else wrote); what ``model_construct`` does without its per-field work, which analysis
        cannot afford for every tool call of every trace (``benchmarks/analyze_scaling.py``). Example::

            stats = TraceStats.built(llm_calls=1, tool_calls=2, tool_errors=0, input_tokens=5, output_tokens=3)
        """
        model = _new(cls)
        _set_dict(model, values)
        # Every field is given, so every model of the class shares one set of all its field names (pydantic
        # only ever adds a field's own name to it, which is already there).
        try:
            _set_fields(model, _ALL_FIELDS[cls])
        except KeyError:
            _set_fields(model, _ALL_FIELDS.setdefault(cls, set(cls.model_fields)))
        _set_extra(model, None)
        _set_private(model, None)
        return model

    @classmethod
    def built_many(cls, rows: Iterable[dict[str, Any]]) -> list[Self]:
        """``built`` of each dict of ``rows`` (every field, in declaration order), in one loop: the tool calls
        of a trace. The dicts become the models' ``__dict__``."""
        try:
            fields = _ALL_FIELDS[cls]
        except KeyError:
            fields = _ALL_FIELDS.setdefault(cls, set(cls.model_fields))
        models = []
        new, set_dict, set_fields, set_extra, set_private = _new, _set_dict, _set_fields, _set_extra, _set_private
        for values in rows:
            model = new(cls)
            set_dict(model, values)
            set_fields(model, fields)
            set_extra(model, None)
            set_private(model, None)
            models.append(model)
        return models

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
        """The model as UTF-8 JSON (compact unless ``indent``), as the analyze JSON writes it: the bytes of
        ``orjson.dumps(self.to_plain())``, from a faster walk of the models (``_plain``)."""
        option = JSON_OPTIONS | orjson.OPT_INDENT_2 if indent else JSON_OPTIONS
        return orjson.dumps(_plain(self), option=option)


_Plan = list[tuple[str, str, Callable[[Any], bool] | None, bool]] | None
_PLANS: dict[type, _Plan] = {}


def _plan(cls: type[ResultModel]) -> _Plan:
    """How ``model_dump(by_alias=True)`` writes a model of ``cls``: each field's name, its JSON key, the test
    that leaves it out (``exclude_if``) and whether its declared type can hold a model (to walk into), in
    declaration order; None when the model's ``__dict__`` is what it writes (keys the field names, none
    left out, no model inside). Read once per class."""
    plan = [(name, info.serialization_alias or info.alias or name, info.exclude_if, _holds_model(info.annotation))
            for name, info in cls.model_fields.items()]  # fmt: skip
    simple = all(key == name and omit is None and not walk for name, key, omit, walk in plan)
    _PLANS[cls] = None if simple else plan
    return _PLANS[cls]


def _holds_model(annotation: Any) -> bool:
    """Whether a declared type is, or contains (``list[X]``, ``dict[str, X]``, ``X | None``), a results model."""
    if isinstance(annotation, type) and issubclass(annotation, ResultModel):
        return True
    return any(_holds_model(arg) for arg in getattr(annotation, "__args__", ()))


def _plain(model: ResultModel) -> dict[str, Any]:
    """A model as ``model_dump(by_alias=True)`` gives it (aliased keys, fields it leaves out left out,
    undeclared keys after the declared ones), walking only into the fields whose type can hold a model:
    orjson writes everything else (the tool calls' arguments, the metadata) at its own speed. A model's
    ``__dict__`` holds its fields in declaration order (validated, or ``built`` as documented)."""
    cls = type(model)
    plan = _PLANS.get(cls, _UNPLANNED)
    if plan is _UNPLANNED:
        plan = _plan(cls)
    fields = model.__dict__
    extra = model.__pydantic_extra__
    if plan is None:
        return {**fields, **extra} if extra else fields
    out = {}
    for name, key, omit, walk in plan:
        value = fields[name]
        if omit is not None and omit(value):
            continue
        out[key] = _walk(value) if walk else value
    if extra:
        out.update(extra)
    return out


def _walk(value: Any) -> Any:
    """A field's value with every results model in it made plain (``_plain``)."""
    cls = type(value)
    shape = _SHAPES.get(cls)
    if shape is None:
        shape = _shape(cls)
    if shape is _MODEL:
        return _plain(value)
    if shape is _LIST:
        return _plain_list(value)
    if shape is _DICT:
        return {key: _walk(item) for key, item in value.items()}
    return value


def _plain_list(items: list[Any]) -> list[Any]:
    """``_walk`` of each item; a model whose ``__dict__`` is what it writes (the tool calls) without a call."""
    plain = []
    for item in items:
        if _PLANS.get(type(item), _UNPLANNED) is None:
            extra = item.__pydantic_extra__
            plain.append({**item.__dict__, **extra} if extra else item.__dict__)
        else:
            plain.append(_walk(item))
    return plain


_MODEL, _LIST, _DICT, _LEAF = "model", "list", "dict", "leaf"
_SHAPES: dict[type, str] = {}
_UNPLANNED: Any = object()  # a class whose plan is not read yet (None is a plan: "write the __dict__")


def _shape(cls: type) -> str:
    """What ``_walk`` does with a value of ``cls`` (read once per class, as ``isinstance`` would decide)."""
    if issubclass(cls, ResultModel):
        shape = _MODEL
    elif issubclass(cls, list):
        shape = _LIST
    elif issubclass(cls, dict):
        shape = _DICT
    else:
        shape = _LEAF
    _SHAPES[cls] = shape
    return shape


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
