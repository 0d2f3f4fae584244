"""OpenHands' stuck detector, reproduced by ``--detector-preset openhands`` / ``openhands-interactive``.

The scenarios are those of OpenHands ``tests/unit/controller/test_is_stuck.py`` (rules in
``openhands/controller/stuck.py``; read at commit 156d0686c46aafb0fa9d291da6421fb6f64dddc0), translated into
transcripts written here as test inputs: a ``CmdRunAction`` is an ``execute_bash`` call, a ``FileReadAction``
a ``read_file`` call, an ``IPythonRunCellAction`` an ``execute_ipython_cell`` call, an observation the
call's result (an ``ErrorObservation`` an error result), an agent ``MessageAction`` an agent message without
a tool call, a user ``MessageAction`` a user message. At each checkpoint where the peer asserts
``is_stuck``, tracekit's answer is asserted equal (``stuck_now``: a loop finding takes in the last step).

Not ported: the context-window scenarios (``AgentCondensationObservation`` has no counterpart among a
trace's tool calls) and ``TestAgentController`` (delegation). docs/detectors.md lists the differences.
"""

from __future__ import annotations

from typing import Any

import pytest

from .factories import Call, Turn, call, user
from .peer_scenarios import Step, agent, stuck_now

HEADLESS, INTERACTIVE = "openhands", "openhands-interactive"


def bash(command: str, output: str = "", *, error: bool = False) -> Turn:
    return call("execute_bash", {"command": command}, output, error=error)


def read(path: str, content: str) -> Turn:
    return call("read_file", {"path": path}, content)


def ipython(code: str, output: str) -> Turn:
    # An IPythonRunCellObservation is not an ErrorObservation: the cell's output is an ordinary result.
    return call("execute_ipython_cell", {"code": code}, output)


def test_history_too_short() -> None:
    steps: list[Step] = [user("Hello"), bash("ls", "file1.txt\nfile2.txt")]
    assert stuck_now(steps, HEADLESS) is False


def test_interactive_mode_resets_after_user_message() -> None:
    steps: list[Step] = [bash("ls") for _ in range(4)]
    assert stuck_now(steps, HEADLESS) is True
    assert stuck_now(steps, INTERACTIVE) is True
    steps.append(user("Hello"))
    assert stuck_now(steps, INTERACTIVE) is False  # only the history after the last user message counts
    assert stuck_now(steps, HEADLESS) is True  # user messages do not count
    steps += [bash("ls") for _ in range(2)]
    assert stuck_now(steps, INTERACTIVE) is False
    steps += [bash("ls") for _ in range(2)]
    assert stuck_now(steps, INTERACTIVE) is True


def test_a_user_text_beside_tool_results_is_a_user_message_too() -> None:
    # The rule for interactive mode: the same reset when the user's words ride in the message that
    # carries the last tool result.
    steps: list[Step] = [bash("ls") for _ in range(3)]
    steps.append({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_x", "name": "execute_bash",
                                                    "input": {"command": "ls"}}]})
    steps.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": ""},
                                              {"type": "text", "text": "Hello"}]})
    assert stuck_now(steps, INTERACTIVE) is False
    assert stuck_now(steps, HEADLESS) is True
    steps += [bash("ls") for _ in range(4)]
    assert stuck_now(steps, INTERACTIVE) is True


def test_is_stuck_repeating_action_observation() -> None:
    steps: list[Step] = [agent("Hello"), bash("ls"), bash("ls"), user("Done")]
    assert stuck_now(steps, HEADLESS) is False
    steps.append(bash("ls"))
    assert stuck_now(steps, HEADLESS) is False
    steps.append(bash("ls"))
    assert stuck_now(steps, HEADLESS) is True


def test_is_stuck_repeating_action_error() -> None:
    # (action, error observation), not necessarily the same error
    steps: list[Step] = [
        agent("Hello"),
        bash("invalid_command", "Command not found", error=True),
        bash("invalid_command", "Command still not found or another error", error=True),
        user("Done"),
        bash("invalid_command", "Different error", error=True),
        bash("invalid_command", "Command not found", error=True),
    ]
    assert stuck_now(steps, HEADLESS) is True


CODE_SNIPPET = """
edit_file_by_replace(
    'book_store.py',
    to_replace=\"""def total(basket):
    if not basket:
        return 0
"""
JUPYTER = "\n[Jupyter current working directory:\n[Jupyter Python interpreter:"


def _syntax_errors(error_message: str, random_line: bool, incidents: int = 4) -> list[Step]:
    steps: list[Step] = []
    for i in range(incidents):
        number = (i + 1) * 10 if random_line else "42"
        extra = "\n" * (i + 1) if random_line else ""
        output = (
            f'  Cell In[1], line {number}\nto_replace="""def largest(min_factor, max_factor):\n            ^\n'
            f"{error_message}{extra}" + JUPYTER
        )
        steps.append(ipython(CODE_SNIPPET, output))
    return steps


def _unterminated_strings(random_line: bool, incidents: int = 4) -> list[Step]:
    steps: list[Step] = []
    for i in range(incidents):
        number = (i + 1) * 10 if random_line else "1"
        output = (
            f'print("  Cell In[1], line {number}\nhello\n       ^\nSyntaxError: unterminated string literal '
            f"(detected at line {number})" + JUPYTER
        )
        steps.append(ipython(CODE_SNIPPET, output))
    return steps


INVALID = "SyntaxError: invalid syntax. Perhaps you forgot a comma?"
INCOMPLETE = "SyntaxError: incomplete input"


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param(_syntax_errors(INVALID, False), True, id="test_is_stuck_invalid_syntax_error"),
        pytest.param(_syntax_errors(INVALID, True), False, id="test_is_not_stuck_invalid_syntax_error_random_lines"),
        pytest.param(
            _syntax_errors(INVALID, True, 3), False, id="test_is_not_stuck_invalid_syntax_error_only_three_incidents"
        ),
        pytest.param(_syntax_errors(INCOMPLETE, False), True, id="test_is_stuck_incomplete_input_error"),
        pytest.param(_syntax_errors(INCOMPLETE, True), False, id="test_is_not_stuck_incomplete_input_error"),
        pytest.param(
            _unterminated_strings(True), False, id="test_is_not_stuck_ipython_unterminated_string_error_random_lines"
        ),
        pytest.param(
            _unterminated_strings(False, 2),
            False,
            id="test_is_not_stuck_ipython_unterminated_string_error_only_two_incidents",
        ),
        pytest.param(_unterminated_strings(False), True, id="test_is_stuck_ipython_unterminated_string_error"),
    ],
)
def test_ipython_syntax_error_scenarios(steps: list[Step], expected: bool) -> None:
    assert stuck_now(steps, HEADLESS) is expected


def test_is_not_stuck_ipython_syntax_error_not_at_end() -> None:
    # the "at line x" changes in between: no false positive
    outputs = [
        'print("hello\n       ^\nSyntaxError: unterminated string literal (detected at line 1)\n'
        "This is some additional output",
        'print("hello\n       ^\nSyntaxError: unterminated string literal (detected at line 1)\n'
        "Too much output here on and on",
        'print("hello\n       ^\nSyntaxError: unterminated string literal (detected at line 3)\nEnough',
        'print("hello\n       ^\nSyntaxError: unterminated string literal (detected at line 2)\nLast line of output',
    ]
    assert stuck_now([ipython('print("hello', output) for output in outputs], HEADLESS) is False


def test_is_stuck_repeating_action_observation_pattern() -> None:
    listing, content = "file1.txt\nfile2.txt", "File content"
    steps: list[Step] = [
        user("Come on"),
        bash("ls", listing),
        read("file1.txt", content),
        bash("ls", listing),
        read("file1.txt", content),
        user("Come on"),
        bash("ls", listing),
        read("file1.txt", content),
    ]
    assert stuck_now(steps, HEADLESS) is True


def test_is_stuck_not_stuck() -> None:
    steps: list[Step] = [
        agent("Hello"),
        bash("ls", "file1.txt\nfile2.txt"),
        read("file1.txt", "File content"),
        bash("pwd", "/home/user"),
        read("file2.txt", "Another file content"),
        user("Done"),
        bash("pwd", "/home/user"),
        read("file2.txt", "Another file content"),
    ]
    assert stuck_now(steps, HEADLESS) is False


def test_is_stuck_monologue() -> None:
    reply = "I'm doing well, thanks for asking."
    echo: dict[str, Any] = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'm not stuck, he's stuck"},
            {"type": "tool_use", "id": "toolu_echo", "name": "execute_bash", "input": {"command": "echo 42"}},
        ],
    }
    steps: list[Step] = [user("Hi there!"), agent("Hi there!"), user("How are you?"), echo]
    steps += [agent(reply) for _ in range(3)]
    assert stuck_now(steps, HEADLESS) is True
    # an observation between the repeated messages
    steps.append(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_echo",
                                      "content": "OK, I was stuck, but no more."}]}
    )
    steps += [agent(reply) for _ in range(2)]
    assert stuck_now(steps, HEADLESS) is False


def test_parallel_identical_calls_count_one_after_the_other() -> None:
    # Not a peer scenario: OpenHands turns parallel tool calls into one action after another, each with its
    # observation, and the preset counts them the same way.
    turn = Turn(None, [Call("execute_bash", {"command": "ls"}, "") for _ in range(2)])
    assert stuck_now([bash("ls"), turn, bash("ls")], HEADLESS) is True
    assert stuck_now([bash("ls"), turn], HEADLESS) is False
