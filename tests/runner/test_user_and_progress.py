"""The model-played simulated user, and the progress display."""

from __future__ import annotations

import io
from typing import Any

from tracekit.cases.context import SimulatedUser
from tracekit.progress import Progress
from tracekit.runner.simulated_user import DONE_MARKER, ModelUser, ScriptedUser, simulated_user_for
from tracekit.runner.turn_clients import ModelTurn


class StubClient:
    """A TurnClient that answers from a list and keeps what it was asked."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, list[dict[str, Any]]]] = []

    def complete(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 max_tokens: int) -> ModelTurn:
        self.asked.append((system, messages))
        return ModelTurn([{"type": "text", "text": self.answers[len(self.asked) - 1]}], "end_turn")


CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": "我想去海岛度假"},
    {"role": "assistant", "content": [{"type": "text", "text": "请问从哪里出发？"},
                                      {"type": "tool_use", "id": "t", "name": "x", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "{}"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "几个人？"}]},
]


def test_model_user_plays_the_persona_with_roles_swapped_and_stops_when_done() -> None:
    client = StubClient(["上海出发，两个人", f"谢谢，{DONE_MARKER}"])
    user = ModelUser(client, "提出困难需求但会提供信息", max_turns=20)
    assert user.reply(CONVERSATION) == "上海出发，两个人"
    system, seen = client.asked[0]
    assert "提出困难需求但会提供信息" in system
    # the agent's words reach the user model as 'user', tool traffic is left out
    assert seen == [{"role": "user", "content": "请问从哪里出发？\n几个人？"}]
    assert user.reply(CONVERSATION) is None


def test_which_simulator_a_case_gets() -> None:
    scripted = simulated_user_for(SimulatedUser(persona="p", replies=["a", "b"], max_turns=2))
    assert isinstance(scripted, ScriptedUser)
    assert scripted.reply([]) == "a" and scripted.reply([]) is None  # 2 user turns: the case's own and one reply
    assert isinstance(simulated_user_for(SimulatedUser(persona="p"), StubClient([])), ModelUser)
    assert simulated_user_for(SimulatedUser(persona="p")) is None
    assert simulated_user_for(None) is None


def test_progress_lines_and_bar() -> None:
    lines = io.StringIO()
    progress = Progress(2, stream=lines, interactive=False)
    progress.advance("B2-TS-01__A__r0 end_turn")
    progress.advance("B2-TS-02__A__r0 api_error", ok=False)
    assert lines.getvalue().splitlines() == ["[1/2] B2-TS-01__A__r0 end_turn ok",
                                             "[2/2] B2-TS-02__A__r0 api_error error"]
    assert progress.failed == 1
    bar = io.StringIO()
    redrawn = Progress(4, stream=bar, interactive=True)
    redrawn.advance("job")
    redrawn.close()
    assert bar.getvalue().startswith("\r[######" + "." * 18 + "] 1/4") and bar.getvalue().endswith("\n")
