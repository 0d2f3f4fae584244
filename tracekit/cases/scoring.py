"""How a case is scored: auto, judge or both, the seed's criteria, the judge's rubric, the skill A/B
groups whose runs are compared, and tiers (pass / acceptable intervals of a count, seed 003's three-tier
tool selection)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tracekit.cases.base import StrictModel

Scoring = Literal["auto", "judge", "auto+judge"]


class Criteria(StrictModel):
    """The seed's 判定标准, verbatim."""

    pass_: str = Field(alias="pass", description="The seed's Pass line.")
    acceptable: str | None = Field(default=None, description="The seed's Acceptable line, if any.")
    fail: str = Field(description="The seed's Fail line.")


class Judge(StrictModel):
    """How an LLM judge decides the parts the machine checks cannot."""

    rubric: str = Field(min_length=1, description="What the judge looks at, in the seed's words.")
    decide: str | None = Field(default=None, description="How the judge maps what it sees to a verdict.")


class SkillGroup(StrictModel):
    """One group of the skill A/B test."""

    skill_enabled: bool = Field(description="Whether skills are enabled for this group.")
    active_skills: list[str] = Field(
        default_factory=list, description="Skills loaded (cases/skills/<name>.md); empty means none named."
    )
    note: str | None = Field(default=None, description="The seed's remark on this group, verbatim.")


class Skills(StrictModel):
    """The A/B skill configuration (Group A usually without skills, Group B with)."""

    A: SkillGroup | None = Field(default=None, description="Group A (control).")
    B: SkillGroup | None = Field(default=None, description="Group B (skills).")
    note: str | None = Field(default=None, description="The seed's remark on the comparison, verbatim.")

    @property
    def groups(self) -> dict[str, SkillGroup]:
        """The groups the case defines, by name."""
        return {name: group for name, group in (("A", self.A), ("B", self.B)) if group is not None}


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
