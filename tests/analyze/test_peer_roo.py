"""Roo Code's ToolRepetitionDetector, reproduced by ``--detector-preset roo``.

The scenarios are those of Roo Code ``src/core/tools/__tests__/ToolRepetitionDetector.spec.ts`` (rule in
``src/core/tools/ToolRepetitionDetector.ts``; read at commit cb836567180a3ff1da6d082f3178b90c3bd22a70),
translated into transcripts written here as test inputs: each ``check(toolUse)`` is one tool call (its
``params`` and ``nativeArgs`` together are the call's input), and ``allowExecution: false`` is tracekit's
"stuck now" on the transcript that ends with that call. A limit other than Roo's default 3 is the
individual option ``repeated_call.min_repeats``; limit 0 (unlimited) is ``repeated_call.enabled=false``.

Not ported: the test that overrides Roo's private serializer (it tests Roo's internals, not its rule).
The browser scroll exclusion (``isBrowserScrollAction``; the spec's "browser scroll action exclusion" block,
as stored at commit 1ad5afb9ded36b5261451a9710179cbd9f2830a1) is ported below: the preset's
``repeated_call.ignore`` holds Roo's two scroll actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from .factories import Turn, call
from .peer_scenarios import Step, stuck_now

ROO = "roo"


def use(name: str, params: dict[str, Any] | None = None) -> Turn:
    # The calls' results do not matter to Roo's rule; the call is answered like any other.
    return call(name, params or {}, "ok")


def allowed(sequence: Sequence[Step], limit: int = 3) -> list[bool]:
    """Roo's ``allowExecution`` for each call of the sequence, as tracekit answers it."""
    overrides = {"repeated_call": {"min_repeats": limit}} if limit > 0 else {"repeated_call": {"enabled": False}}
    return [not stuck_now(sequence[: n + 1], ROO, overrides) for n in range(len(sequence))]


def test_default_limit_is_3_the_fourth_identical_call_is_blocked() -> None:
    assert allowed([use("test-tool")] * 4) == [True, True, True, False]


def test_custom_limit() -> None:
    assert allowed([use("test-tool")] * 3, limit=2) == [True, True, False]


def test_different_tool_calls_are_allowed() -> None:
    assert allowed([use("first-tool"), use("second-tool"), use("third-tool")]) == [True, True, True]


def test_a_different_call_resets_the_counter() -> None:
    assert allowed([use("same-tool"), use("different-tool"), use("same-tool")], limit=2)[-1] is True


def test_reset_after_the_limit_is_reached() -> None:
    assert allowed([use("repeat-tool")] * 3 + [use("new-tool")], limit=2) == [True, True, False, True]


def test_previously_problematic_tool_is_allowed_after_reset() -> None:
    assert allowed([use("problem-tool")] * 4, limit=2) == [True, True, False, True]


def test_the_limit_must_be_reached_again_after_reset() -> None:
    assert allowed([use("repeat-tool")] * 6, limit=2) == [True, True, False, True, True, False]


def test_the_finding_names_the_tool() -> None:
    from .peer_scenarios import loop_findings, transcript

    [finding] = loop_findings(transcript([use("special-tool-name")] * 3), ROO, {"repeated_call": {"min_repeats": 2}})
    assert "special-tool-name" in finding.message


def test_a_tool_without_parameters() -> None:
    assert allowed([use("empty-tool")] * 3, limit=2)[-1] is False


def test_parameters_in_another_order_are_identical() -> None:
    sequence = [
        use("same-tool", {"a": "1", "b": "2", "c": "3"}),
        use("same-tool", {"c": "3", "a": "1", "b": "2"}),
        use("same-tool", {"b": "2", "c": "3", "a": "1"}),
    ]
    assert allowed(sequence, limit=2)[-1] is False


@pytest.mark.parametrize(("limit", "blocked_at"), [(1, 2), (2, 3), (3, 4), (5, 6)])
def test_the_nth_call_is_blocked(limit: int, blocked_at: int) -> None:
    answers = allowed([use("tool-name")] * blocked_at, limit=limit)
    assert answers == [True] * (blocked_at - 1) + [False]


def test_limit_0_never_blocks() -> None:
    assert all(allowed([use("tool-name")] * 10, limit=0))


def test_the_counter_restarts_after_blocking() -> None:
    assert allowed([use("tool-name")] * 4, limit=2) == [True, True, False, True]


def test_native_arguments_tell_calls_apart() -> None:
    file1, file2 = use("read_file", {"path": "file1.ts"}), use("read_file", {"path": "file2.ts"})
    assert allowed([file1, file2, file1], limit=2) == [True, True, True]
    assert allowed([use("read_file", {"path": "same-file.ts"})] * 3, limit=2)[-1] is False
    slices = [use("read_file", {"path": "a.ts", "offset": 1, "limit": 2000}),
              use("read_file", {"path": "a.ts", "offset": 2001, "limit": 2000})]
    assert allowed(slices, limit=2) == [True, True]
    commands = [use("execute_command", {"command": "ls", "cwd": "/home/user"}),
                use("execute_command", {"command": "ls", "cwd": "/home/admin"})]
    assert allowed(commands, limit=2) == [True, True]
    assert allowed([use("read_file", {"path": "test.txt"})] * 3, limit=2) == [True, True, False]


def test_identical_calls_count_whatever_they_returned() -> None:
    # Roo compares the calls only: failed calls count as repeats as well.
    failing = [call("read_file", {"path": "x"}, "Error: no such file", error=True) for _ in range(4)]
    assert allowed(failing) == [True, True, True, False]


# --------------------------------------------------------------------------- browser scroll action exclusion


def browser(action: str | None, **params: Any) -> Turn:
    return use("browser_action", {**({"action": action} if action is not None else {}), **params})


def test_scroll_down_and_scroll_up_are_never_counted() -> None:
    assert all(allowed([browser("scroll_down")] * 10, limit=2))
    assert all(allowed([browser("scroll_up")] * 10, limit=2))
    assert all(allowed([browser("scroll_down"), browser("scroll_up")] * 5, limit=2))


def test_other_browser_actions_and_other_tools_still_count() -> None:
    assert allowed([browser("click", coordinate="[100, 200]")] * 3, limit=2) == [True, True, False]
    assert allowed([use("read_file", {"path": "test.txt"})] * 3, limit=2) == [True, True, False]
    assert allowed([browser(None)] * 3, limit=2) == [True, True, False]  # no action parameter: normal rule


def test_scrolls_between_identical_calls_do_not_break_the_run() -> None:
    ls, scroll = use("execute_command", {"command": "ls"}), browser("scroll_down")
    assert allowed([ls, scroll, scroll, ls, scroll, ls], limit=2) == [True, True, True, True, True, False]


def test_with_ignore_emptied_scrolls_are_ordinary_calls() -> None:
    # The exclusion is the preset's ignore option: emptied, ten identical scrolls are repeats like any other.
    from .peer_scenarios import stuck

    assert stuck([browser("scroll_down")] * 10, ROO, {"repeated_call": {"min_repeats": 2, "ignore": []}}) is True
