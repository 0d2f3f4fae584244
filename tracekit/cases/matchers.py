"""Expected calls and the argument matchers that check them."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator, model_validator

from tracekit.cases.base import StrictModel


class NumberRange(StrictModel):
    """An inclusive numeric range; either bound may be omitted."""

    min: float | None = Field(default=None, description="Smallest allowed value.")
    max: float | None = Field(default=None, description="Largest allowed value.")


class OutputRef(StrictModel):
    """A value produced by an earlier call: ``path`` into that tool's (JSON) result."""

    tool: str = Field(description="The earlier tool whose result holds the value.")
    path: str = Field(description="Dotted path in the result, e.g. 'city_id' or 'items[1].product_id'.")


class NamedExtension(StrictModel):
    """A check or matcher that an installed package adds (``tracekit plugins`` lists them), by its name, with
    the value or options it is given."""

    name: str = Field(min_length=1, description="The name it is registered under (its entry point's name).")
    value: Any = Field(default=None, description="What it is given: the expected value or its options.")


MATCHER_NAMES = (
    "exact", "subset", "one_of", "range", "regex", "contains", "enum",
    "relative_date", "from_output", "present", "any_of", "custom",
)  # fmt: skip


class ArgMatcher(StrictModel):
    """How one argument of an expected call is checked. Exactly one key.

    ``exact`` equal (canonical JSON); ``subset`` dict/list containing these; ``one_of`` any listed value;
    ``range`` number within bounds; ``regex`` string matches (search); ``contains`` string contains;
    ``enum`` value in the tool schema's enum (true) or in the given list; ``relative_date`` the date the
    phrase means from ``context.now``; ``from_output`` equals a value of an earlier result;
    ``present`` the argument is given (true) or absent (false); ``any_of`` one of several matchers;
    ``custom`` a matcher an installed package adds, by name.
    """

    exact: Any = Field(default=None, description="Value the argument must equal.")
    subset: dict[str, Any] | list[Any] | None = Field(default=None, description="Must contain these.")
    one_of: list[Any] | None = Field(default=None, description="Allowed values.")
    range: NumberRange | None = Field(default=None, description="Allowed numeric range.")
    regex: str | None = Field(default=None, description="Regular expression searched in the value.")
    contains: str | None = Field(default=None, description="Substring the value must contain.")
    enum: bool | list[Any] | None = Field(
        default=None, description="true: value in the tool schema's enum; a list: value in that list."
    )
    relative_date: str | None = Field(
        default=None, description="A date phrase ('明天', '下周五', '5 月 10 号') resolved against context.now."
    )
    from_output: OutputRef | None = Field(default=None, description="Value must come from an earlier result.")
    present: bool | None = Field(default=None, description="true: argument given; false: argument absent.")
    any_of: list[ArgMatcher] | None = Field(default=None, description="Passes when any matcher passes.")
    custom: NamedExtension | None = Field(
        default=None, description="A matcher an installed package adds (`@argument_matcher`), by name, with its value."
    )

    @model_validator(mode="before")
    @classmethod
    def _exactly_one(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = [key for key in data if key in MATCHER_NAMES]
            if len(data) == len(known) and len(known) != 1:
                raise ValueError(f"a matcher has exactly one of {', '.join(MATCHER_NAMES)}; got {known or 'none'}")
        return data

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regex: {exc}") from None
        return value

    @property
    def kind(self) -> str:
        """The name of the matcher's one key."""
        return next(iter(self.model_fields_set))

    @property
    def value(self) -> Any:
        """The matcher's operand."""
        return getattr(self, self.kind)


class ExpectedCall(StrictModel):
    """A call the agent should make (or, under ``forbidden_calls``, must not make).

    ``args`` checks arguments one by one (name -> matcher); written ``args: {exact: {...}}`` it is one
    matcher over the whole arguments object (equal, canonically). ``no_extra_args`` also refuses any
    argument that ``args`` does not name.
    """

    tool: str | None = Field(default=None, description="The tool to call.")
    one_of_tools: list[str] | None = Field(default=None, description="Any of these tools satisfies the check.")
    args: dict[str, ArgMatcher] = Field(default_factory=dict, description="Argument name -> matcher.")
    args_exact: dict[str, Any] | None = Field(
        default=None, description="The whole arguments object, compared canonically (written `args: {exact: ...}`)."
    )
    no_extra_args: bool = Field(default=False, description="true: no argument beyond those `args` names.")
    note: str | None = Field(default=None, description="Why this call is expected (free text).")

    @model_validator(mode="before")
    @classmethod
    def _whole_arguments(cls, data: Any) -> Any:
        if isinstance(data, dict):
            args = data.get("args")
            if isinstance(args, dict) and list(args) == ["exact"] and isinstance(args["exact"], dict):
                data = {**data, "args": {}, "args_exact": args["exact"]}
        return data

    @model_validator(mode="after")
    def _names_tools(self) -> ExpectedCall:
        if bool(self.tool) == bool(self.one_of_tools):
            raise ValueError("give exactly one of tool or one_of_tools")
        return self

    @property
    def tools(self) -> list[str]:
        """Every tool that satisfies this expectation."""
        return [self.tool] if self.tool else list(self.one_of_tools or [])

