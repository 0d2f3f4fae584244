"""What a case gives the agent: its provenance in the seeds, the world's context, and the input."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import Field, field_validator

from tracekit.cases.base import StrictModel


class SeedRef(StrictModel):
    """Where a case comes from in the seed specifications (``../shared/seeds`` beside the repository)."""

    file: str = Field(description="Seed file name, e.g. '000_649a87b897009fb0.txt'.")
    section: str = Field(description="Seed section title (Chinese), e.g. '参数构造准确率'.")
    number: int = Field(ge=1, description="1-based position of the case within its seed section.")
    heading: str | None = Field(
        default=None, description="The case's own heading line in the seed, verbatim, when it has one."
    )


class Context(StrictModel):
    """What the agent knows about the world when the case starts."""

    now: dt.date | None = Field(
        default=None, description="The current date of the case ('当前日期'); relative dates resolve from it."
    )
    weekday: str | None = Field(
        default=None,
        description="The weekday the seed gives for `now`, verbatim (e.g. '周一'). When the calendar disagrees "
        "(the seeds call 2026-04-07 周一, a Tuesday), relative dates are accepted on either reading.",
    )
    location: str | None = Field(default=None, description="Where the user is, when the seed says so.")
    tools: list[str] = Field(
        default_factory=list, description="Tools offered to the agent, by catalog name (cases/tools/)."
    )
    kind: str | None = Field(default=None, description="The seed's '上下文类型' (e.g. 'synthetic'), verbatim.")
    notes: str | None = Field(default=None, description="Any other context text of the seed, verbatim.")


class ImageRef(StrictModel):
    """An image given to the agent with the user message."""

    path: str = Field(
        description="Local image, relative to the library directory: 'assets/price_tag_299.png' "
        "(made by cases/assets/make_images.py).",
    )
    description: str | None = Field(default=None, description="The seed's description of the image.")
    source_url: str | None = Field(default=None, description="The seed's remote image URL, if it gave one.")


class SimulatedUser(StrictModel):
    """A scripted or LLM-played user for dynamic (multi-turn) cases."""

    persona: str | None = Field(default=None, description="Who the simulated user is and what they want.")
    max_turns: int | None = Field(default=None, ge=1, description="Maximum number of user turns.")
    replies: list[str] = Field(default_factory=list, description="Scripted user replies, in order.")


class CaseInput(StrictModel):
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

