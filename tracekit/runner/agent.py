"""The reference agent: a plain tool-use loop on the official SDK.

It sends the conversation and the offered tools, runs every tool_use of the reply with the mock executor,
sends the results back, and stops when the model ends its turn without a tool call (and no simulated user
has more to say), or at a limit: model turns, or output tokens over the whole session. A model API error
that survives the SDK's retries ends the session too; the proxy has recorded it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from tracekit.runner.conversation import AgentStart
from tracekit.runner.mock_tools import MockToolExecutor
from tracekit.runner.simulated_user import UserSimulator
from tracekit.runner.turn_clients import TurnClient


@dataclass(frozen=True)
class AgentLimits:
    """When the reference agent stops on its own."""

    max_turns: int = 25
    """Model calls in one session."""
    max_tokens: int = 2048
    """``max_tokens`` of each model call."""
    token_budget: int = 40_000
    """Output tokens over the whole session."""


@dataclass
class AgentOutcome:
    """How a session ended."""

    stop: str
    """'end_turn', 'max_tokens', 'refusal', ... (the model's last stop reason), 'turn_limit',
    'token_limit', or 'api_error'."""
    turns: int
    tool_calls: int
    user_turns: int
    output_tokens: int
    duration_ms: float
    error: str | None = None
    messages: list[dict[str, Any]] | None = None

    def as_record_fields(self) -> dict[str, Any]:
        """Fields for the trace's closing ``agent_run`` record."""
        return {"stop": self.stop, "turns": self.turns, "tool_calls": self.tool_calls,
                "user_turns": self.user_turns, "output_tokens": self.output_tokens}


def run_agent(
    start: AgentStart,
    client: TurnClient,
    tools: MockToolExecutor,
    limits: AgentLimits = AgentLimits(),
    user: UserSimulator | None = None,
) -> AgentOutcome:
    """Run one session from ``start`` to its end (see the module docstring)."""
    began = time.perf_counter()
    messages = [dict(message) for message in start.messages]
    turns = tool_calls = user_turns = output_tokens = 0
    stop = "turn_limit"
    error: str | None = None
    while turns < limits.max_turns:
        if output_tokens >= limits.token_budget:
            stop = "token_limit"
            break
        try:
            turn = client.complete(start.system, messages, start.tools, limits.max_tokens)
        except Exception as exc:  # the SDK's APIError family and transport errors alike end the session
            stop, error = "api_error", f"{type(exc).__name__}: {exc}"
            break
        turns += 1
        output_tokens += turn.output_tokens
        messages.append({"role": "assistant", "content": turn.content or [{"type": "text", "text": ""}]})
        if turn.tool_uses:
            results = []
            for block in turn.tool_uses:
                outcome = tools.run(str(block.get("name")), block.get("input"))
                result: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.get("id"),
                                          "content": outcome.content}
                if outcome.is_error:
                    result["is_error"] = True
                results.append(result)
            tool_calls += len(results)
            messages.append({"role": "user", "content": results})
            continue
        answer = user.reply(messages) if user is not None and turn.stop_reason != "max_tokens" else None
        if answer is None:
            stop = turn.stop_reason or "end_turn"
            break
        user_turns += 1
        messages.append({"role": "user", "content": answer})
    return AgentOutcome(
        stop, turns, tool_calls, user_turns, output_tokens, round((time.perf_counter() - began) * 1000, 3),
        error, messages,
    )
