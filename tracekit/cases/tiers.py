"""Tiers: pass / acceptable intervals of a count, and seed 003's three-tier tool selection."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tracekit.cases.base import StrictModel


class Bound(StrictModel):
    """An inclusive integer interval; either end may be omitted."""

    min: int | None = Field(default=None, ge=0, description="Smallest value in the tier.")
    max: int | None = Field(default=None, ge=0, description="Largest value in the tier.")

    def contains(self, value: int | float) -> bool:
        """Whether ``value`` lies in the interval."""
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


class Tiers(StrictModel):
    """Pass / acceptable intervals of a count; a value in neither is a fail."""

    pass_: Bound = Field(alias="pass", description="Interval that passes.")
    acceptable: Bound | None = Field(default=None, description="Interval that is acceptable (else fail).")

    def grade(self, value: int | float) -> Literal["pass", "acceptable", "fail"]:
        """The tier ``value`` falls in."""
        if self.pass_.contains(value):
            return "pass"
        if self.acceptable is not None and self.acceptable.contains(value):
            return "acceptable"
        return "fail"


class ToolTiers(StrictModel):
    """Seed 003's three-tier tool selection: best = 40, acceptable = 30, wrong = 0 points."""

    best: list[str] = Field(default_factory=list, description="Best tools ('none' = answer directly).")
    acceptable: list[str] = Field(default_factory=list, description="Usable but not ideal tools.")
    wrong: list[str] = Field(default_factory=list, description="Wrong tools for this task.")

