"""The policy file: a domain's rules, written once and applied to every trace (``tracekit analyze --policy``).

YAML, read with the safe loader and checked by the ``Policy`` model (``tracekit schema policy`` prints its
JSON Schema); an error names the file, the line and the field. ``--policy NAME`` also takes a policy
shipped with tracekit (``tau-airline``, ``tau-retail``: ``tracekit/diagnose/policies/``). How to write
one: ``docs/diagnosis.md``.

Example::

    policy = load_policy("tau-airline")
    policy.tools_of("write")     # ['book_reservation', 'cancel_reservation', ...]
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tracekit.diagnose.expressions import Expression, parse_expression
from tracekit.errors import ExpressionError, PolicyError
from tracekit.safe_yaml import SafeLoader, safe_load_yaml

SHIPPED = Path(__file__).resolve().parent / "policies"

#: Explicit confirmations, English and Chinese (matched as words, case-insensitive; Chinese as substrings).
CONFIRM_PHRASES = ["yes", "yeah", "yep", "confirm", "confirmed", "i confirm", "proceed", "go ahead", "please do",
                   "sure", "ok", "okay", "correct", "that's right", "sounds good",
                   "确认", "是的", "好的", "可以", "同意", "没问题", "就这样", "行"]  # fmt: skip

#: How an agent asks for confirmation of what it proposes.
REQUEST_PHRASES = ["confirm", "proceed", "shall i", "should i", "would you like", "do you want", "go ahead",
                   "确认", "是否", "要不要", "可以吗"]  # fmt: skip


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _listed(description: str) -> Any:
    """A list field that is empty unless the policy gives it."""
    return Field(default_factory=list, description=description)


class Confirmation(_Strict):
    """A call of these classes needs the user's explicit confirmation since the last such call."""

    classes: list[str] = Field(default_factory=lambda: ["write"], description="Tool classes that need it.")
    phrases: list[str] = Field(
        default_factory=lambda: list(CONFIRM_PHRASES),
        description="What counts as an explicit confirmation in the user's message (words, any language).",
    )
    requests: list[str] = Field(
        default_factory=lambda: list(REQUEST_PHRASES),
        description="How the agent's proposal asks for confirmation (for a confirmed proposal left undone).",
    )
    proposal_fields: list[str] = _listed(
        "Argument names (at any depth) whose values must appear in the agent's message the user "
        "confirmed: the write must be what was proposed."
    )


class Precondition(_Strict):
    """A tool needs an earlier successful call (with the same argument values), or a state of its result."""

    tool: str = Field(description="The tool (or tool class) the precondition applies to.")
    requires: str | list[str] = _listed(
        "A tool or class, or a list of them, one of which must have succeeded earlier; empty: "
        "``holds`` is read over the call's own arguments (``args.x``)."
    )
    same: list[str] = _listed(
        "Arguments the earlier call must have had with the same value: ``name``, or "
        "``name=earlier_name`` when the earlier tool names it differently."
    )
    holds: str | None = Field(
        default=None,
        description="An expression over the latest such earlier result (and ``args.*``) that must hold "
        '(docs/diagnosis.md: ``status == "pending"``, ``cabin in ["business"]``).',
    )
    user_asked: list[str] = _listed(
        "The user must have said one of these before the call (a word start, case-insensitive: "
        "``cancel`` also matches ``cancellation``; Chinese as substrings): the agent acts on a request the user "
        "made, not on its own initiative (``policy:user_request``)."
    )
    because: str = Field(default="", description="The policy sentence it comes from, for the message.")

    @field_validator("holds")
    @classmethod
    def _parses(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_expression(value)
            except ExpressionError as exc:
                raise ValueError(str(exc)) from None
        return value

    @property
    def required(self) -> list[str]:
        """``requires`` as a list."""
        return [self.requires] if isinstance(self.requires, str) else list(self.requires)

    @cached_property
    def expression(self) -> Expression | None:
        """``holds`` parsed."""
        return parse_expression(self.holds) if self.holds is not None else None


class CallLimit(_Strict):
    """At most ``limit`` calls of a tool (per distinct value of an argument, when ``per`` names one)."""

    tool: str = Field(description="The tool (or tool class).")
    limit: int = Field(ge=0, description="The most calls allowed.")
    per: str | None = Field(default=None, description="Count per value of this argument (e.g. order_id).")
    because: str = Field(default="", description="The policy sentence it comes from.")


class OpenTask(_Strict):
    """The conversation must not end with the task open."""

    enabled: bool = Field(default=True, description="Check how the conversation ends.")
    end_markers: list[str] = _listed(
        "Text by which the user ends the conversation (a simulated user's stop token): a last "
        "user message holding one is not a message left unanswered."
    )


class Policy(_Strict):
    """A domain's policy: tool classes and the invariants every trace of the domain must keep."""

    name: str = Field(description="Short name of the policy.")
    description: str = Field(default="", description="What domain it is for.")
    sources: list[str] = _listed("Where its rules come from (documents, URLs).")
    classes: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Tool classes (read, write, transfer, authenticate, ...): class -> tool names.",
    )
    confirmation: Confirmation | None = Field(default=None, description="Writes need explicit confirmation.")
    preconditions: list[Precondition] = _listed("What a tool needs first.")
    final: list[str] = Field(
        default_factory=lambda: ["transfer"],
        description="Classes (or tools) after whose call nothing but an answer may follow (a transfer).",
    )
    limits: list[CallLimit] = _listed("At most N calls of a tool.")
    one_at_a_time: list[str] = _listed(
        "Classes (or tools) whose calls must be issued one per message; ``*`` for every tool."
    )
    open_task: OpenTask = Field(default_factory=OpenTask, description="How a conversation may end.")
    tools: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Input JSON Schemas by tool name, for traces whose requests were not recorded "
        "(imported conversations); a recorded request's own declarations always come first.",
    )

    def tools_of(self, name: str) -> set[str]:
        """The tools a class or tool name stands for (``*``: every tool, as the set ``{"*"}``)."""
        return set(self.classes.get(name, [name]))

    def members(self, names: list[str]) -> set[str]:
        """The tools of several class or tool names."""
        found: set[str] = set()
        for name in names:
            found |= self.tools_of(name)
        return found


def load_policy(name_or_path: str | Path) -> Policy:
    """A policy file checked, or a shipped policy by name; ``PolicyError`` naming file, line and field."""
    path = Path(name_or_path)
    if not path.exists() and (SHIPPED / f"{name_or_path}.yaml").exists():
        path = SHIPPED / f"{name_or_path}.yaml"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        shipped = ", ".join(sorted(p.stem for p in SHIPPED.glob("*.yaml")))
        raise PolicyError(f"{path}: cannot read the policy file ({exc}); shipped policies: {shipped}") from None
    document = safe_load_yaml(text, str(path), PolicyError)
    if not isinstance(document, dict):
        raise PolicyError(f"{path}:1: expected a mapping with name, classes, confirmation, preconditions, ...")
    try:
        return Policy.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = [part for part in error["loc"]]
        field = ".".join(str(part) for part in where) or "(top level)"
        message = str(error["msg"]).removeprefix("Value error, ")
        raise PolicyError(f"{path}:{_line_of(text, where)}: {field}: {message}") from None


def policy_schema() -> dict[str, Any]:
    """The JSON Schema of a policy file (``tracekit schema policy``)."""
    return Policy.model_json_schema()


def _line_of(text: str, where: list[Any]) -> int:
    """The 1-based line of the deepest node of ``where`` (keys and list positions) the file has."""
    node = yaml.compose(text, Loader=SafeLoader)  # safe: the text passed the bomb check already
    line = 1
    for key in where:
        if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        elif isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == str(key):
                    line, node = key_node.start_mark.line + 1, value_node
                    break
            else:
                break
        else:
            break
    return line
