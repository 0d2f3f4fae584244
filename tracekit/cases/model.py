"""The Case model: one test case of the library, as written in ``cases/<dim>/<ID>.yaml``.

Every model forbids unknown fields, so that a typo in a case file is an error that names the field
instead of a check that silently never runs. The shape follows ``.team/CASE_SHAPE.md``; this module
is the authority. ``Case.model_json_schema()`` is what ``tracekit cases schema`` prints for editors.

Seed text (user messages, expected behaviour, criteria) is carried verbatim: Chinese stays as written.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

Dimension = Literal["B2", "Q3", "Q1", "C4", "TT"]
Scoring = Literal["auto", "judge", "auto+judge"]
OrderMode = Literal["strict", "in-order", "any-order", "subset", "superset"]

#: Case ids follow the seeds: ``B2-PC-02``, ``Q3-ST-01``, ..., and ``TT-01`` for the article's traps.
CASE_ID_PATTERN = r"^(?:(?P<dim>B2|Q3|Q1|C4)-(?P<cat>[A-Z]{2})-\d{2}|TT-\d{2})$"

#: Dimensions and their section codes in seed order (DESIGN.md "Contracts").
SECTION_ORDER: dict[str, tuple[str, ...]] = {
    "B2": ("TS", "PC", "TC", "FR", "RC", "MM"),
    "Q3": ("ST", "TC", "RC", "OR", "OE"),
    "Q1": ("TF", "KB", "RF", "UE", "CC", "MM"),
    "C4": ("LD", "DR", "PA", "AR"),
    "TT": ("TT",),
}

#: The pseudo tool name seed 003 uses for "answer without a tool".
NO_TOOL = "none"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# --------------------------------------------------------------------------- provenance and context


class SeedRef(_Strict):
    """Where a case comes from in the seed specifications (``../shared/seeds`` beside the repository)."""

    file: str = Field(description="Seed file name, e.g. '000_649a87b897009fb0.txt'.")
    section: str = Field(description="Seed section title (Chinese), e.g. '参数构造准确率'.")
    number: int = Field(ge=1, description="1-based position of the case within its seed section.")
    heading: str | None = Field(
        default=None, description="The case's own heading line in the seed, verbatim, when it has one."
    )


class Context(_Strict):
    """What the agent knows about the world when the case starts."""

    now: dt.date | None = Field(
        default=None, description="The current date of the case ('当前日期'); relative dates resolve from it."
    )
    location: str | None = Field(default=None, description="Where the user is, when the seed says so.")
    tools: list[str] = Field(
        default_factory=list, description="Tools offered to the agent, by catalog name (cases/tools/)."
    )
    kind: str | None = Field(default=None, description="The seed's '上下文类型' (e.g. 'synthetic'), verbatim.")
    notes: str | None = Field(default=None, description="Any other context text of the seed, verbatim.")


class ImageRef(_Strict):
    """An image given to the agent with the user message."""

    path: str = Field(
        description="Local image, relative to the library directory: 'assets/price_tag_299.png' "
        "(made by cases/assets/make_images.py).",
    )
    description: str | None = Field(default=None, description="The seed's description of the image.")
    source_url: str | None = Field(default=None, description="The seed's remote image URL, if it gave one.")


class SimulatedUser(_Strict):
    """A scripted or LLM-played user for dynamic (multi-turn) cases."""

    persona: str | None = Field(default=None, description="Who the simulated user is and what they want.")
    max_turns: int | None = Field(default=None, ge=1, description="Maximum number of user turns.")
    replies: list[str] = Field(default_factory=list, description="Scripted user replies, in order.")


class CaseInput(_Strict):
    """What the agent receives: a user message, a history, or the seed's injected messages."""

    system: str | None = Field(default=None, description="System prompt, if the case sets one.")
    user: str | None = Field(
        default=None, description="The user message, verbatim; null when `messages` already carries it."
    )
    messages: list[dict[str, Any]] = Field(
        default_factory=list,
        description="History or the seed's 'messages 注入', Anthropic message format, verbatim. "
        "These are history: the calls in them are not judged.",
    )
    images: list[ImageRef] = Field(default_factory=list, description="Images sent with the user message.")
    simulated_user: SimulatedUser | None = Field(default=None, description="For dynamic cases.")

    @field_validator("images", mode="before")
    @classmethod
    def _paths_as_refs(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"path": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("messages")
    @classmethod
    def _messages_have_roles(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for index, message in enumerate(value):
            if message.get("role") not in ("user", "assistant"):
                raise ValueError(f"message {index}: role must be 'user' or 'assistant'")
            if "content" not in message:
                raise ValueError(f"message {index}: missing 'content'")
        return value


# --------------------------------------------------------------------------- intercepts and faults


class InjectedResult(_Strict):
    """A tool result put in place of the real one: the seed's ``inject_tool_result`` / ``inject_result``."""

    content: str | list[dict[str, Any]] = Field(description="The tool_result content the model will see.")
    is_error: bool = Field(default=False, description="The tool_result's is_error flag.")


class ToolIntercept(_Strict):
    """Replace every result of a tool (or of each of several tools) by one injected result."""

    type: Literal["tool_intercept"] = "tool_intercept"
    intercept_tool: str | None = Field(default=None, description="The tool whose results are replaced.")
    intercept_tools: list[str] | None = Field(default=None, description="Several tools, same injection.")
    inject_tool_result: InjectedResult = Field(description="The result the model sees instead.")

    @model_validator(mode="after")
    def _names_a_tool(self) -> ToolIntercept:
        if not self.intercept_tool and not self.intercept_tools:
            raise ValueError("give intercept_tool or intercept_tools")
        return self

    @property
    def tools(self) -> list[str]:
        """Every tool this intercept applies to."""
        return [*([self.intercept_tool] if self.intercept_tool else []), *(self.intercept_tools or [])]


class MockedCall(_Strict):
    """One mocked result. With ``params_match`` it applies to calls whose input contains those key/values;
    without it, to the tool's calls in order."""

    tool: str = Field(description="The tool whose call is mocked.")
    params_match: dict[str, Any] | None = Field(
        default=None, description="Key/values the call's input must contain for this mock to apply."
    )
    inject_result: InjectedResult = Field(
        validation_alias=AliasChoices("inject_result", "result"),
        description="The result the model sees (the seed calls it inject_result; `result` is accepted).",
    )


class ToolMock(_Strict):
    """The seed's ``tool_mock``: mocked results applied in order."""

    type: Literal["tool_mock"] = "tool_mock"
    mocked_calls: list[MockedCall] = Field(min_length=1, description="Mocks, in the order they apply.")

    @property
    def tools(self) -> list[str]:
        """Every tool this mock applies to."""
        return list(dict.fromkeys(call.tool for call in self.mocked_calls))


Intercept = Annotated[ToolIntercept | ToolMock, Field(discriminator="type")]
"""A case intercept, applied by the proxy to the tool_result blocks of each request."""


class _Fault(_Strict):
    on_requests: list[int] | None = Field(
        default=None, description="1-based model requests the fault applies to; null means every request."
    )


class HttpErrorFault(_Fault):
    """Answer the model request with an HTTP error in the provider's error format."""

    type: Literal["http_error"] = "http_error"
    status: int = Field(ge=400, le=599, description="HTTP status, e.g. 429, 500, 529.")
    body: dict[str, Any] | str | None = Field(default=None, description="Error body; default per provider.")
    should_retry: bool | None = Field(default=None, description="Value of the x-should-retry header.")


class LatencyFault(_Fault):
    """Delay the model response."""

    type: Literal["latency"] = "latency"
    latency_ms: int = Field(ge=0, description="Added delay before the response starts, in milliseconds.")


class StreamCutFault(_Fault):
    """Close the SSE stream after a number of events."""

    type: Literal["stream_cut"] = "stream_cut"
    cut_after_events: int = Field(ge=0, description="Events sent before the connection is closed.")


class StreamErrorFault(_Fault):
    """Send an in-stream ``error`` event after a number of events."""

    type: Literal["stream_error"] = "stream_error"
    after_events: int = Field(default=0, ge=0, description="Events sent before the error event.")
    error_type: str = Field(default="overloaded_error", description="The error event's error.type.")
    message: str = Field(default="Overloaded", description="The error event's error.message.")


Fault = Annotated[
    HttpErrorFault | LatencyFault | StreamCutFault | StreamErrorFault, Field(discriminator="type")
]
"""A transport fault on the model API, applied by the proxy on top of the intercepts."""


# --------------------------------------------------------------------------- argument matchers


class NumberRange(_Strict):
    """An inclusive numeric range; either bound may be omitted."""

    min: float | None = Field(default=None, description="Smallest allowed value.")
    max: float | None = Field(default=None, description="Largest allowed value.")


class OutputRef(_Strict):
    """A value produced by an earlier call: ``path`` into that tool's (JSON) result."""

    tool: str = Field(description="The earlier tool whose result holds the value.")
    path: str = Field(description="Dotted path in the result, e.g. 'city_id' or 'items[1].product_id'.")


MATCHER_NAMES = (
    "exact", "subset", "one_of", "range", "regex", "contains", "enum",
    "relative_date", "from_output", "present", "any_of",
)  # fmt: skip


class ArgMatcher(_Strict):
    """How one argument of an expected call is checked. Exactly one key.

    ``exact`` equal (canonical JSON); ``subset`` dict/list containing these; ``one_of`` any listed value;
    ``range`` number within bounds; ``regex`` string matches (search); ``contains`` string contains;
    ``enum`` value in the tool schema's enum (true) or in the given list; ``relative_date`` the date the
    phrase means from ``context.now``; ``from_output`` equals a value of an earlier result;
    ``present`` the argument is given (true) or absent (false); ``any_of`` one of several matchers.
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


class ExpectedCall(_Strict):
    """A call the agent should make (or, under ``forbidden_calls``, must not make)."""

    tool: str | None = Field(default=None, description="The tool to call.")
    one_of_tools: list[str] | None = Field(default=None, description="Any of these tools satisfies the check.")
    args: dict[str, ArgMatcher] = Field(default_factory=dict, description="Argument name -> matcher.")
    note: str | None = Field(default=None, description="Why this call is expected (free text).")

    @model_validator(mode="after")
    def _names_tools(self) -> ExpectedCall:
        if bool(self.tool) == bool(self.one_of_tools):
            raise ValueError("give exactly one of tool or one_of_tools")
        return self

    @property
    def tools(self) -> list[str]:
        """Every tool that satisfies this expectation."""
        return [self.tool] if self.tool else list(self.one_of_tools or [])


class CallOrder(_Strict):
    """Order requirement over the agent's tool calls (agentevals' trajectory match modes).

    ``strict`` exactly these calls in this order; ``in-order`` these tools appear in this order, others
    may interleave; ``any-order`` all appear, any order; ``subset`` no tool outside the list;
    ``superset`` at least these tools.
    """

    mode: OrderMode = Field(description="How the trajectory is compared with `tools`.")
    tools: list[str] = Field(min_length=1, description="Tool names, in the expected order.")


class DataFlow(_Strict):
    """A value of an earlier result must be passed on as an argument of a later call."""

    from_tool: str = Field(description="Tool whose result holds the value.")
    from_path: str = Field(description="Path of the value in that result, e.g. 'city_id'.")
    to_tool: str = Field(description="Tool that must receive it.")
    to_arg: str = Field(description="Argument (dotted path) of the receiving call.")


class Bound(_Strict):
    """An inclusive integer interval; either end may be omitted."""

    min: int | None = Field(default=None, ge=0, description="Smallest value in the tier.")
    max: int | None = Field(default=None, ge=0, description="Largest value in the tier.")

    def contains(self, value: int | float) -> bool:
        """Whether ``value`` lies in the interval."""
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


class Tiers(_Strict):
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


class ToolTiers(_Strict):
    """Seed 003's three-tier tool selection: best = 40, acceptable = 30, wrong = 0 points."""

    best: list[str] = Field(default_factory=list, description="Best tools ('none' = answer directly).")
    acceptable: list[str] = Field(default_factory=list, description="Usable but not ideal tools.")
    wrong: list[str] = Field(default_factory=list, description="Wrong tools for this task.")


RecoveryMode = Literal["retry", "fallback", "ask_user", "explain"]


def _default_recovery_modes() -> list[RecoveryMode]:
    return ["retry", "fallback", "ask_user"]


class Recovery(_Strict):
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


class AnswerCheck(_Strict):
    """Plain-text checks on the agent's final answer."""

    contains_all: list[str] = Field(default_factory=list, description="Every string must appear.")
    contains_any: list[str] = Field(default_factory=list, description="At least one must appear.")
    not_contains: list[str] = Field(default_factory=list, description="None may appear.")
    regex: str | None = Field(default=None, description="A regular expression that must match.")


class Expect(_Strict):
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


# --------------------------------------------------------------------------- judging and skills


class Criteria(_Strict):
    """The seed's 判定标准, verbatim."""

    pass_: str = Field(alias="pass", description="The seed's Pass line.")
    acceptable: str | None = Field(default=None, description="The seed's Acceptable line, if any.")
    fail: str = Field(description="The seed's Fail line.")


class Judge(_Strict):
    """How an LLM judge decides the parts the machine checks cannot."""

    rubric: str = Field(min_length=1, description="What the judge looks at, in the seed's words.")
    decide: str | None = Field(default=None, description="How the judge maps what it sees to a verdict.")


class SkillGroup(_Strict):
    """One group of the skill A/B test."""

    skill_enabled: bool = Field(description="Whether skills are enabled for this group.")
    active_skills: list[str] = Field(
        default_factory=list, description="Skills loaded (cases/skills/<name>.md); empty means none named."
    )
    note: str | None = Field(default=None, description="The seed's remark on this group, verbatim.")


class Skills(_Strict):
    """The A/B skill configuration (Group A usually without skills, Group B with)."""

    A: SkillGroup | None = Field(default=None, description="Group A (control).")
    B: SkillGroup | None = Field(default=None, description="Group B (skills).")
    note: str | None = Field(default=None, description="The seed's remark on the comparison, verbatim.")

    @property
    def groups(self) -> dict[str, SkillGroup]:
        """The groups the case defines, by name."""
        return {name: group for name, group in (("A", self.A), ("B", self.B)) if group is not None}


# --------------------------------------------------------------------------- the case


class Case(_Strict):
    """One test case: input, intercepts, expectations and how it is scored."""

    id: str = Field(pattern=CASE_ID_PATTERN, description="Case id, e.g. 'B2-PC-02' or 'TT-03'.")
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
        """Every tool named anywhere in the expectations (calls, order, data flow, tiers)."""
        expect = self.expect
        names: set[str] = set(expect.forbidden_tools)
        for call in [*expect.calls, *expect.forbidden_calls]:
            names.update(call.tools)
            for matcher in call.args.values():
                if matcher.from_output is not None:
                    names.add(matcher.from_output.tool)
        if expect.order:
            names.update(expect.order.tools)
        for flow in expect.data_flow:
            names.update((flow.from_tool, flow.to_tool))
        for group in expect.parallel:
            names.update(group)
        names.update(expect.tool_counts)
        if expect.tool_tiers:
            names.update([*expect.tool_tiers.best, *expect.tool_tiers.acceptable, *expect.tool_tiers.wrong])
        names.discard(NO_TOOL)
        return names

    def intercepted_tool_names(self) -> set[str]:
        """Every tool an intercept or mock of this case applies to."""
        return {tool for intercept in self.intercepts for tool in intercept.tools}
