"""The machine checks of a case (``expect``): required and forbidden calls, order, data flow, tiers,
recovery and the final answer."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from tracekit.cases.base import StrictModel
from tracekit.cases.matchers import ExpectedCall, NamedExtension
from tracekit.cases.scoring import Bound, Tiers, ToolTiers

OrderMode = Literal["strict", "in-order", "any-order", "subset", "superset", "unordered"]


def _optional(description: str) -> Any:
    """A check the case may leave out: None unless given."""
    return Field(default=None, description=description)


class CallOrder(StrictModel):
    """Order requirement over the agent's tool calls, following agentevals' trajectory match modes
    (``langchain-ai/agentevals`` ``python/tests/test_trajectory.py``).

    The expected calls are tool names, or expected calls with argument matchers (``ExpectedCall``). Calls
    are counted, not merely named: two expected calls of a tool need two calls of it, and each expected
    call is matched to a distinct call of the agent.

    ``strict`` exactly these calls in this order (calls the agent issued together in one turn may come in
    any order among themselves); ``in-order`` these calls appear in this order, others may interleave;
    ``superset`` (alias ``any-order``) every expected call is matched, any order, other calls allowed;
    ``subset`` every call of the agent is matched to an expected one (fewer is fine, nothing outside the
    list, no tool more often than listed); ``unordered`` the same calls as expected, any order.
    """

    mode: OrderMode = Field(description="How the trajectory is compared with `tools`.")
    tools: list[str | ExpectedCall] = Field(
        min_length=1, description="Expected calls in the expected order: tool names, or calls with argument matchers."
    )

    @property
    def tool_names(self) -> list[str]:
        """The tools the expected calls name, in order (every alternative of a one_of_tools call)."""
        names: list[str] = []
        for item in self.tools:
            names.extend([item] if isinstance(item, str) else item.tools)
        return names


class DataFlow(StrictModel):
    """A value of an earlier result must be passed on as an argument of a later call."""

    from_tool: str = Field(description="Tool whose result holds the value.")
    from_path: str = Field(description="Path of the value in that result, e.g. 'city_id'.")
    to_tool: str = Field(description="Tool that must receive it.")
    to_arg: str = Field(description="Argument (dotted path) of the receiving call.")

RecoveryMode = Literal["retry", "fallback", "ask_user", "explain"]


def _default_recovery_modes() -> list[RecoveryMode]:
    return ["retry", "fallback", "ask_user"]


class Recovery(StrictModel):
    """Failure recovery is scored: a failure is injected and the agent must recover.

    After the first failing result of ``failing_tool`` the agent recovered when it did one of ``accept``:
    ``retry`` the tool with changed arguments, ``fallback`` to another tool, ``ask_user`` for the missing
    information, or ``explain`` the failure with an alternative (judged). Relaying the error and stopping
    is a fail. A case whose injected failure never fired is "recovery untested", never a full score.
    """

    expected: bool = Field(default=True, description="Whether a recovery is expected.")
    failing_tool: str | None = _optional("The tool whose failure is injected.")
    accept: list[RecoveryMode] = Field(
        default_factory=_default_recovery_modes,
        description="What counts as recovering: retry, fallback, ask_user, explain.",
    )


class AnswerCheck(StrictModel):
    """Plain-text checks on the agent's final answer."""

    contains_all: list[str] = Field(default_factory=list, description="Every string must appear.")
    contains_any: list[str] = Field(default_factory=list, description="At least one must appear.")
    not_contains: list[str] = Field(default_factory=list, description="None may appear.")
    regex: str | None = _optional("A regular expression that must match.")
    not_regex: str | None = _optional("A regular expression that must not match (e.g. a made-up flight number).")


class EfficiencyScore(StrictModel):
    """Seed 001's overall efficiency score of a case, graded by its tiers:
    (optimal_steps / steps) x (optimal_tokens / answer tokens) x 100, uncapped, as the seed writes it
    ("效率得分 = (1/实际步骤数) × (150/实际 tokens) × 100"). Steps are the tool calls after the history
    (at least 1: the answer itself is a step)."""

    optimal_steps: int = Field(ge=1, description="The seed's optimal number of steps (理论最优).")
    optimal_tokens: int = Field(ge=1, description="The seed's optimal answer length in tokens (理论最优).")
    pass_: Bound = Field(alias="pass", description="Scores that pass (e.g. min 80).")
    acceptable: Bound | None = _optional("Scores that are acceptable (e.g. min 60).")

    @property
    def tiers(self) -> Tiers:
        """The pass / acceptable intervals as ``Tiers``."""
        return Tiers.model_validate({"pass": self.pass_, "acceptable": self.acceptable})


class Branch(StrictModel):
    """One branch of a seed line "A 或 B": the checks that make it hold."""

    label: str = Field(min_length=1, description="The seed's words for this branch, verbatim.")
    expect: Expect = Field(description="The checks of the branch; the branch holds when none fails.")


class Expect(StrictModel):
    """Machine checks of a case: what the trace must (not) contain after the history.

    Every check is seed text unless it sits under ``advisory`` (constraints the seed does not state, marked
    NOT SEED TEXT: reported, never deciding). ``for_pass`` holds what the seed's Pass line asks beyond its
    Fail line: failing one of those makes the verdict acceptable, not fail. ``either`` holds the branches of
    a Pass line "A 或 B": it passes when one branch does.
    """

    calls: list[ExpectedCall] = Field(default_factory=list, description="Calls the agent must make.")
    forbidden_tools: list[str] = Field(default_factory=list, description="Tools the agent must not call.")
    forbidden_calls: list[ExpectedCall] = Field(
        default_factory=list, description="Calls (tool + matching args) the agent must not make."
    )
    no_tool_call: bool | None = _optional("true: the right answer calls no tool.")
    ask_user: bool | None = _optional(
        "true: the agent should ask the user (instead of calling with assumed values); "
        "false: it must act without asking for what it already has."
    )
    order: CallOrder | None = _optional("Order requirement over the calls.")
    data_flow: list[DataFlow] = Field(default_factory=list, description="Values passed between calls.")
    parallel: list[list[str]] = Field(
        default_factory=list,
        description="Groups of independent tools that may be issued in one assistant turn (scored only "
        "as a performance note when the framework supports parallel calls).",
    )
    no_repeated_calls: bool | None = _optional(
        "true: no call may repeat an earlier successful call's tool and arguments."
    )
    call_count: Tiers | None = _optional("Tiers of the number of tool calls.")
    tool_counts: dict[str, Tiers] = Field(
        default_factory=dict, description="Tiers of the number of calls of individual tools."
    )
    output_tokens: Tiers | None = _optional("Tiers of the final answer's tokens.")
    retries: Tiers | None = _optional("Tiers of retries of a failing call.")
    asks: Tiers | None = _optional("Tiers of questions asked to the user.")
    loop_repeats: Tiers | None = _optional("Tiers of repetitions of a call cycle.")
    attempts: Tiers | None = _optional("Tiers of distinct strategies tried.")
    max_retries: int | None = Field(default=None, ge=0, description="Retries of one failing call allowed.")
    tool_tiers: ToolTiers | None = _optional("Seed 003 selection tiers.")
    minimal_calls: int | None = Field(
        default=None, ge=0, description="Theoretical optimum number of calls (efficiency = optimum / actual)."
    )
    recovery: Recovery | None = _optional("Failure recovery is scored.")
    answer: AnswerCheck | None = _optional("Checks on the final answer text.")
    efficiency_score: EfficiencyScore | None = _optional(
        "Seed 001's efficiency score formula and its tiers (the formula decides)."
    )
    calls_after_failure: Tiers | None = _optional(
        "Tiers of the calls of a tool made after that tool had returned an error in this trace "
        "(\"继续调用已知失败的工具\")."
    )
    checks: list[NamedExtension] = Field(
        default_factory=list,
        description="Checks an installed package adds (`@case_check`), by name, each given its `value` as options.",
    )
    either: list[Branch] = Field(
        default_factory=list, description="Branches of a Pass line 'A 或 B': the check passes when one branch holds."
    )
    for_pass: Expect | None = _optional(
        "Checks the seed's Pass line asks for but its Fail line does not: a failing one makes the "
        "verdict acceptable, not fail."
    )
    advisory: Expect | None = _optional(
        "NOT SEED TEXT: constraints the seed does not state, reported as advisory notes, never deciding."
    )



Branch.model_rebuild()
Expect.model_rebuild()
