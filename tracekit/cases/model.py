"""The Case model: one test case of the library, as written in ``cases/<dim>/<ID>.yaml``.

This module and the ones it assembles (context, injections,
matchers, tiers, expect, scoring) are the authority. ``Case.model_json_schema()`` is what
``tracekit cases schema`` prints for editors.

Seed text (user messages, expected behaviour, criteria) is carried verbatim: Chinese stays as written.
"""

from __future__ import annotations

import re

from pydantic import Field, model_validator

from tracekit.cases.base import CASE_ID_PATTERN, NO_TOOL, SECTION_ORDER, Dimension, StrictModel
from tracekit.cases.context import CaseInput, Context, SeedRef
from tracekit.cases.expect import Expect
from tracekit.cases.injections import (
    Fault,
    Intercept,
)
from tracekit.cases.scoring import Criteria, Judge, Scoring, Skills

__all__ = ["Case"]


class Case(StrictModel):
    """One test case: input, intercepts, expectations and how it is scored."""

    id: str = Field(pattern=CASE_ID_PATTERN, description="Case id, e.g. 'B2-PC-nn' or 'TT-nn'.")
    dimension: Dimension = Field(description="B2 | Q3 | Q1 | C4 | TT.")
    category: str = Field(pattern=r"^[A-Z]{2}$", description="Section code from the id, e.g. 'PC' ('TT' for traps).")
    title: str = Field(min_length=1, description="Short title (Chinese).")
    seed: SeedRef = Field(description="Where the case comes from.")
    difficulty: str | None = Field(default=None, description="The seed's 难度, verbatim (简单 / 中等 / 困难).")
    context: Context = Field(default_factory=Context, description="Date, location and offered tools.")
    input: CaseInput = Field(description="User message, history, images.")
    intercepts: list[Intercept] = Field(default_factory=list, description="Tool result intercepts and mocks.")
    faults: list[Fault] = Field(default_factory=list, description="Transport faults on the model API.")
    expected_behaviour: list[str] = Field(default_factory=list, description="The seed's 期望行为, verbatim.")
    criteria: Criteria | None = Field(default=None, description="The seed's 判定标准, verbatim.")
    expect: Expect = Field(default_factory=Expect, description="Machine checks.")
    scoring: Scoring = Field(description="auto (machine checks), judge (LLM), or auto+judge.")
    scoring_note: str | None = Field(default=None, description="The seed's 评分方式 line, verbatim.")
    judge: Judge | None = Field(default=None, description="Required when scoring includes the judge.")
    skills: Skills = Field(default_factory=Skills, description="Skill A/B groups.")
    seed_fields: dict[str, str] = Field(
        default_factory=dict,
        description="Other labelled lines of the seed, verbatim, by label (e.g. 理论最优步骤数, 失败注入).",
    )

    @model_validator(mode="after")
    def _id_agrees(self) -> Case:
        match = re.match(CASE_ID_PATTERN, self.id)
        if match is None:  # reported by the pattern check
            return self
        dimension, category = (match["dim"], match["cat"]) if match["dim"] else ("TT", "TT")
        if self.dimension != dimension:
            raise ValueError(f"dimension {self.dimension!r} does not match id {self.id!r}")
        if self.category != category:
            raise ValueError(f"category {self.category!r} does not match id {self.id!r}")
        return self

    @property
    def uses_judge(self) -> bool:
        """Whether the LLM judge takes part in the verdict."""
        return "judge" in self.scoring

    @property
    def sort_key(self) -> tuple[int, int, str]:
        """Seed order: dimension, then section, then id."""
        dimensions = list(SECTION_ORDER)
        sections = SECTION_ORDER[self.dimension]
        section = sections.index(self.category) if self.category in sections else len(sections)
        return dimensions.index(self.dimension), section, self.id

    def expected_tool_names(self) -> set[str]:
        """Every tool named anywhere in the expectations (calls, order, data flow, tiers, branches, the
        for-pass and advisory checks)."""
        names = _tool_names(self.expect)
        names.discard(NO_TOOL)
        return names

    def discouraged_tool_names(self) -> set[str]:
        """Tools the for-pass or advisory checks forbid: calling one never fails the case by itself."""
        blocks = [sub for sub in (self.expect.for_pass, self.expect.advisory) if sub is not None]
        return {tool for sub in blocks for tool in sub.forbidden_tools}

    def intercepted_tool_names(self) -> set[str]:
        """Every tool an intercept or mock of this case applies to."""
        return {tool for intercept in self.intercepts for tool in intercept.tools}


def _tool_names(expect: Expect) -> set[str]:
    names: set[str] = set(expect.forbidden_tools)
    for call in [*expect.calls, *expect.forbidden_calls]:
        names.update(call.tools)
        for matcher in call.args.values():
            if matcher.from_output is not None:
                names.add(matcher.from_output.tool)
    if expect.order:
        names.update(expect.order.tool_names)
    for flow in expect.data_flow:
        names.update((flow.from_tool, flow.to_tool))
    for group in expect.parallel:
        names.update(group)
    names.update(expect.tool_counts)
    if expect.tool_tiers:
        names.update([*expect.tool_tiers.best, *expect.tool_tiers.acceptable, *expect.tool_tiers.wrong])
    for sub in [*(branch.expect for branch in expect.either), expect.for_pass, expect.advisory]:
        if sub is not None:
            names |= _tool_names(sub)
    return names
