"""OpenHands' two modes on the two scenarios issue 29 names, at every checkpoint, under both presets.

``test_interactive_mode_resets_after_user_message`` and ``test_is_stuck_monologue`` of OpenHands
``tests/unit/controller/test_is_stuck.py`` (rules in ``openhands/controller/stuck.py``, commit 156d0686c4):
``is_stuck(headless_mode=True)`` is ``--detector-preset openhands`` and ``headless_mode=False``
``--detector-preset openhands-interactive``. The peer asserts one mode at some checkpoints; the other mode's
answer follows from the same rules (interactive: only the history after the last user message; headless:
user messages filtered out), and is asserted here too. The last test runs ``tracekit analyze`` itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracekit.cli.main import cli
from tracekit.trace import write_trace

from .factories import call, user
from .peer_scenarios import Step, agent, stuck_now, transcript

PRESETS = ("openhands", "openhands-interactive")
REPLY = "I'm doing well, thanks for asking."
ECHO: dict[str, Any] = {"role": "assistant", "content": [
    {"type": "text", "text": "I'm not stuck, he's stuck"},
    {"type": "tool_use", "id": "toolu_echo", "name": "execute_bash", "input": {"command": "echo 42"}}]}  # fmt: skip
ECHO_OUTPUT: dict[str, Any] = {"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "toolu_echo", "content": "OK, I was stuck, but no more."}]}  # fmt: skip


def ls() -> Step:
    return call("execute_bash", {"command": "ls"}, "")


def _answers(steps: list[Step]) -> tuple[bool, bool]:
    headless, interactive = (stuck_now(steps, preset) for preset in PRESETS)
    return headless, interactive


def test_interactive_mode_resets_after_user_message_in_both_modes() -> None:
    steps: list[Step] = [ls() for _ in range(4)]
    assert _answers(steps) == (True, True)  # peer: both stuck
    steps.append(user("Hello"))
    assert _answers(steps) == (True, False)  # peer: headless still stuck, interactive reset
    steps += [ls() for _ in range(2)]
    assert _answers(steps) == (True, False)  # interactive: two after the user message are not enough
    steps += [ls() for _ in range(2)]
    assert _answers(steps) == (True, True)


def test_is_stuck_monologue_in_both_modes() -> None:
    steps: list[Step] = [user("Hi there!"), agent("Hi there!"), user("How are you?"), ECHO]
    steps += [agent(REPLY) for _ in range(3)]
    assert _answers(steps) == (True, True)  # three identical agent messages, no observation between
    steps.append(ECHO_OUTPUT)
    steps += [agent(REPLY) for _ in range(2)]
    assert _answers(steps) == (False, False)  # an observation between the repeated messages


def test_a_user_message_ends_a_monologue_only_in_interactive_mode() -> None:
    steps: list[Step] = [agent(REPLY), agent(REPLY), user("Are you there?"), agent(REPLY)]
    assert _answers(steps) == (True, False)  # headless filters user messages out: three in a row


@pytest.mark.parametrize(("preset", "kinds"), [("openhands", ["repeated_text"]), ("openhands-interactive", [])])
def test_analyze_with_the_presets(tmp_path: Path, preset: str, kinds: list[str]) -> None:
    trace = transcript([agent(REPLY), agent(REPLY), user("Are you there?"), agent(REPLY)])
    write_trace(tmp_path / "t.jsonl", [trace.header, *trace.records])
    out = tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "t.jsonl"), "--detector-preset", preset,
                                      "--json", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(out.read_text(encoding="utf-8"))["traces"]
    assert [finding["kind"] for finding in entry["findings"]] == kinds
