"""Simulated users for dynamic cases (the seeds' "Simulator persona", up to 20 turns).

When the agent ends its turn, the simulated user answers, until it has nothing more to say or the case's
``max_turns`` user turns are used up:

- ``ScriptedUser``: the case's ``input.simulated_user.replies``, in order;
- ``ModelUser``: a model plays the persona (used when the case has a persona but no scripted replies and
  a real model runs). Its own requests are harness traffic, not the agent's: they go straight to the
  model API, are not recorded, and the trace header's ``meta.simulated_user`` says a model played it.
"""

from __future__ import annotations

from typing import Any, Protocol

from tracekit.cases.context import SimulatedUser
from tracekit.runner.turn_clients import TurnClient

#: What a model-played user says when the conversation is over.
DONE_MARKER = "[结束]"


class UserSimulator(Protocol):
    """Gives the user's next message once the agent has ended its turn."""

    def reply(self, messages: list[dict[str, Any]]) -> str | None:
        """The next user message, or None when the user has nothing more to say."""


class ScriptedUser:
    """Scripted replies, one per agent turn end, at most ``max_turns`` user turns in all."""

    def __init__(self, replies: list[str], max_turns: int | None = None) -> None:
        self.replies = list(replies)
        self.max_turns = max_turns
        self.given = 0

    def reply(self, messages: list[dict[str, Any]]) -> str | None:
        """The next scripted reply, if any is left within the turn limit."""
        # The first user turn is the case's own user message.
        if self.given >= len(self.replies) or (self.max_turns is not None and self.given + 1 >= self.max_turns):
            return None
        self.given += 1
        return self.replies[self.given - 1]


class ModelUser:
    """A model plays the persona; it answers in the user's voice and says ``DONE_MARKER`` when satisfied."""

    def __init__(self, client: TurnClient, persona: str, max_turns: int | None = None, max_tokens: int = 300) -> None:
        self.client = client
        self.persona = persona
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.given = 0

    def reply(self, messages: list[dict[str, Any]]) -> str | None:
        """The persona's answer to the conversation so far (roles swapped for the user model)."""
        if self.max_turns is not None and self.given + 1 >= self.max_turns:
            return None
        system = (
            f"你在扮演一位用户，正在和一个助手对话。你的设定：{self.persona}\n"
            f"只用用户的口吻回复一句话。当你的需求已经得到满足、或助手已经放弃时，只回复 {DONE_MARKER}。"
        )
        turn = self.client.complete(system, _swap_roles(messages), [], self.max_tokens)
        text = turn.text.strip()
        if not text or DONE_MARKER in text:
            return None
        self.given += 1
        return text


def simulated_user_for(spec: SimulatedUser | None, turn_client: TurnClient | None = None) -> UserSimulator | None:
    """The simulator a case asks for: scripted replies when it has them, else a model-played persona when
    a client is given, else none."""
    if spec is None:
        return None
    if spec.replies:
        return ScriptedUser(spec.replies, spec.max_turns)
    if spec.persona and turn_client is not None:
        return ModelUser(turn_client, spec.persona, spec.max_turns)
    return None


def _swap_roles(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the user model sees it: the agent's words as 'user', the user's as 'assistant',
    text only (tool traffic is the agent's business)."""
    swapped: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        text = content if isinstance(content, str) else "".join(
            block.get("text", "") for block in content or [] if block.get("type") == "text"
        )
        if not text:
            continue
        role = "user" if message.get("role") == "assistant" else "assistant"
        if swapped and swapped[-1]["role"] == role:
            swapped[-1]["content"] += "\n" + text
        else:
            swapped.append({"role": role, "content": text})
    while swapped and swapped[0]["role"] != "user":
        swapped.pop(0)
    return swapped
