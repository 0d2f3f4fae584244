"""The machine checks of a case (``expect``): required and forbidden calls, order, data flow, tiers,
recovery and the final answer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tracekit.cases.base import StrictModel
from tracekit.cases.matchers import ExpectedCall
from tracekit.cases.tiers import Tiers, ToolTiers

OrderMode = Literal["strict", "in-order", "any-order", "subset", "superset"]


class CallOrder(StrictModel):
    """Order requirement over the agent's tool calls (agentevals' trajectory match modes).

    ``strict`` exactly these calls in this order; ``in-order`` these tools appear in this order, others
    may interleave; ``any-order`` all appear, any order; ``subset`` no tool outside the list;
    ``superset`` at least these tools.
    """

    mode: OrderMode = Field(description="How the trajectory is compared with `tools`.")
    tools: list[str] = Field(min_length=1, description="Tool names, in the expected order.")


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
    failing_tool: str | None = Field(default=None, description="The tool whose failure is injected.")
    accept: list[RecoveryMode] = Field(
        default_factory=_default_recovery_modes,
        description="What counts as recovering: retry, fallback, ask_user, explain.",
    )


class AnswerCheck(StrictModel):
    """Plain-text checks on the agent's final answer."""

    contains_all: list[str] = Field(default_factory=list, description="Every string must appear.")
    contains_any: list[str] = Field(default_factory=list, description="At least one must appear.")
    not_contains: list[str] = Field(default_factory=list, description="None may appear.")
    regex: str | None = Field(default=None, description="A regular expression that must match.")


class Expect(StrictModel):
    """Machine checks of a case: what the trace must (not) contain after the history."""

    calls: list[ExpectedCall] = Field(default_factory=list, description="Calls the agent must make.")
    forbidden_tools: list[str] = Field(default_factory=list, description="Tools the agent must not call.")
    forbidden_calls: list[ExpectedCall] = Field(
        default_factory=list, description="Calls (tool + matching args) the agent must not make."
    )
    no_tool_call: bool | None = Field(default=None, description="true: the right answer calls no tool.")
    ask_user: bool | None = Field(
        default=None,
        description="true: the agent should ask the user (instead of calling with assumed values); "
        "false: it must act without asking for what it already has.",
    )
    order: CallOrder | None = Field(default=None, description="Order requirement over the calls.")
    data_flow: list[DataFlow] = Field(default_factory=list, description="Values passed between calls.")
    parallel: list[list[str]] = Field(
        default_factory=list,
        description="Groups of independent tools that may be issued in one assistant turn (scored only "
        "as a performance note when the framework supports parallel calls).",
    )
    no_repeated_calls: bool | None = Field(
        default=None, description="true: no call may repeat an earlier successful call's tool and arguments."
    )
    call_count: Tiers | None = Field(default=None, description="Tiers of the number of tool calls.")
    tool_counts: dict[str, Tiers] = Field(
        default_factory=dict, description="Tiers of the number of calls of individual tools."
    )
    output_tokens: Tiers | None = Field(default=None, description="Tiers of the final answer's tokens.")
    retries: Tiers | None = Field(default=None, description="Tiers of retries of a failing call.")
    asks: Tiers | None = Field(default=None, description="Tiers of questions asked to the user.")
    loop_repeats: Tiers | None = Field(default=None, description="Tiers of repetitions of a call cycle.")
    attempts: Tiers | None = Field(default=None, description="Tiers of distinct strategies tried.")
    max_retries: int | None = Field(default=None, ge=0, description="Retries of one failing call allowed.")
    tool_tiers: ToolTiers | None = Field(default=None, description="Seed 003 selection tiers.")
    minimal_calls: int | None = Field(
        default=None, ge=0, description="Theoretical optimum number of calls (efficiency = optimum / actual)."
    )
    recovery: Recovery | None = Field(default=None, description="Failure recovery is scored.")
    answer: AnswerCheck | None = Field(default=None, description="Checks on the final answer text.")

