"""Gemini CLI's loop detection, reproduced by ``--detector-preset gemini-cli``.

The scenarios are those of Gemini CLI ``packages/core/src/services/loopDetectionService.test.ts`` (rules in
``packages/core/src/services/loopDetectionService.ts``; read at commit
5411f113cafae26161b4969b0237b8e1e024e2c2), translated into transcripts written here as test inputs: a
``ToolCallRequest`` event is a tool call, the ``Content`` events of one stretch are the text of one agent
message (a response streamed as those events), ``service.reset`` is a new transcript. Gemini CLI keeps
reporting a loop once found until the next prompt, so its answer is whether tracekit finds any loop.

A trace keeps whole messages, not stream deltas: where the peer's scenario relies on a content event that
starts with Markdown structure (a table row, list item, heading, quote), the port puts that structure on a
line of its own. Not ported: the LLM-based check (it asks a model), the session and config switches and the
strike counter (the peer's API, not its rule). docs/detectors.md lists the differences.
"""

from __future__ import annotations

import random
import string

from .factories import call, user
from .peer_scenarios import Step, agent, stuck, thinking

GEMINI = "gemini-cli"
THRESHOLD, CHUNK = 5, 50  # TOOL_CALL_LOOP_THRESHOLD, CONTENT_CHUNK_SIZE
CONTENT_THRESHOLD = 10  # CONTENT_LOOP_THRESHOLD


def tool(name: str, **args: object) -> Step:
    return call(name, dict(args), "ok")


def repetitive(id_: int, length: int) -> str:
    """The peer's ``createRepetitiveContent``."""
    base = f"This is a unique sentence, id={id_}. "
    return (base * (length // len(base) + 1))[:length]


def randomly(length: int, seed: int) -> str:
    """Random letters and digits (seeded: the peer uses Math.random)."""
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(length))


def said(*events: str) -> list[Step]:
    """One agent message streamed as these content events."""
    return [agent("".join(events))]


# --------------------------------------------------------------------------- tool call loops


def test_fewer_than_threshold_identical_calls_are_not_a_loop() -> None:
    assert stuck([tool("testTool", param="value")] * (THRESHOLD - 1), GEMINI) is False


def test_the_threshold_th_identical_call_and_later_ones_are_a_loop() -> None:
    assert stuck([tool("testTool", param="value")] * THRESHOLD, GEMINI) is True
    assert stuck([tool("testTool", param="value")] * (THRESHOLD + 1), GEMINI) is True


def test_different_tool_calls_are_not_a_loop() -> None:
    cycle = [tool("testTool", param="value1"), tool("testTool", param="value2"), tool("anotherTool", param="value1")]
    assert stuck(cycle * (THRESHOLD - 2), GEMINI) is False


def test_other_events_do_not_reset_the_tool_call_count() -> None:
    calls = [tool("testTool", param="value")] * (THRESHOLD - 1)
    assert stuck([*calls, thinking("a thought"), tool("testTool", param="value")], GEMINI) is True
    assert stuck([*calls, agent("Some content."), tool("testTool", param="value")], GEMINI) is True


def test_cycles_of_two_three_and_five_calls() -> None:
    a, b, c = (tool("read_file", file_path=f"loop_{x}.txt") for x in "abc")
    assert stuck([a, b] * 7 + [a], GEMINI) is True  # 15 calls
    assert stuck(([a, b, c] * 7)[:20], GEMINI) is True
    five = [tool("t", id=n) for n in range(1, 6)]
    assert stuck(five * 6, GEMINI) is True


def test_alternating_sequences_that_vary_are_not_a_loop() -> None:
    a, b, c = (tool("read_file", file_path=f"loop_{x}.txt") for x in "abc")
    assert stuck([a, b, a, b, c, a, b, a, b], GEMINI) is False


def test_a_new_prompt_resets_the_tool_call_count() -> None:
    # reset(promptId) on each new user prompt
    calls = [tool("testTool", param="value")] * (THRESHOLD - 1)
    assert stuck([*calls, user("next question"), tool("testTool", param="value")], GEMINI) is False


# --------------------------------------------------------------------------- content loops


def test_random_content_is_not_a_loop() -> None:
    assert stuck(said(*(randomly(10, seed) for seed in range(1000))), GEMINI) is False


def test_a_chunk_repeated_consecutively_is_a_loop() -> None:
    assert stuck(said(*[repetitive(1, CHUNK)] * CONTENT_THRESHOLD), GEMINI) is True
    assert stuck(said(*[repetitive(1, CHUNK)] * (CONTENT_THRESHOLD - 1)), GEMINI) is False


def test_a_list_with_a_long_shared_prefix_is_not_a_loop() -> None:
    prefix = "projects/my-google-cloud-project-12345/locations/us-central1/services/"
    assert stuck(said("".join(f"- {prefix}{i}\n" for i in range(15))), GEMINI) is False


def test_repetitions_far_apart_are_not_a_loop() -> None:
    events = [text for n in range(CONTENT_THRESHOLD) for text in (repetitive(1, CHUNK), randomly(500, n))]
    assert stuck(said(*events), GEMINI) is False


def test_longer_repeating_patterns() -> None:
    pattern = repetitive(1, 150)
    assert stuck(said(*[pattern] * (CONTENT_THRESHOLD + 2)), GEMINI) is True


def test_the_user_provided_loop_examples() -> None:
    first = (
        "I will not output any text.\n  I will just end the turn.\n  I am done.\n  I will not do anything else.\n"
        "  I will wait for the user's next command.\n"
    )
    second = (
        "I have added all the requested logs and verified the test file. I will now mark the task as complete.\n  "
    )
    assert stuck(said(*[first] * (CONTENT_THRESHOLD + 5)), GEMINI) is True
    assert stuck(said(*[second] * (CONTENT_THRESHOLD + 5)), GEMINI) is True


def test_alternating_short_phrases_and_repeated_thoughts() -> None:
    assert stuck(said(*["Thinking... Done. "] * (CONTENT_THRESHOLD * 3)), GEMINI) is True
    thought = "I need to check the file. The file does not exist. I will create the file. "
    assert stuck(said(*[thought] * (CONTENT_THRESHOLD + 5)), GEMINI) is True


def test_repetition_inside_a_code_block_is_not_a_loop() -> None:
    text = repetitive(1, CHUNK)
    assert stuck(said("```\n", *[text] * CONTENT_THRESHOLD, "\n```"), GEMINI) is False
    into_code = said(*[text] * (CONTENT_THRESHOLD - 2), "```javascript\n", *[text] * CONTENT_THRESHOLD)
    assert stuck(into_code, GEMINI) is False
    assert stuck(said("Here is some code:\n```\n", *[text] * (CONTENT_THRESHOLD + 5)), GEMINI) is False
    assert stuck(said("Normal text ", "```\n", *[text] * 5, "```\n", "```python\n"), GEMINI) is False
    tokens = "for (let i = 0; i < 10; i++) { console.log(i); }"
    assert stuck(said("```\n", *[tokens] * 20, "\n```"), GEMINI) is False
    assert stuck(said("```\ncode1\n```", "\nsome text\n", "```\ncode2\n```"), GEMINI) is False


def test_repetition_after_a_code_block_is_a_loop() -> None:
    text = repetitive(1, CHUNK)
    assert stuck(said("```", "\nsome code\n", "```", *[text] * CONTENT_THRESHOLD), GEMINI) is True
    assert stuck(said("```", "\ncode1\n", "```", *[text] * CONTENT_THRESHOLD), GEMINI) is True


def test_a_code_fence_resets_the_count() -> None:
    text = repetitive(1, CHUNK)
    assert stuck(said(*[text] * (CONTENT_THRESHOLD - 1), "```", *[text] * CONTENT_THRESHOLD), GEMINI) is False


def test_markdown_structure_resets_the_count() -> None:
    text = repetitive(1, CHUNK)
    for structure in ("| Column 1 | Column 2 |", "* List item", "## Heading", "> Quote text"):
        events = [*[text] * (CONTENT_THRESHOLD - 1), f"\n{structure}\n", *[text] * (CONTENT_THRESHOLD - 1)]
        assert stuck(said(*events), GEMINI) is False, structure
        # and the same text without the structure line is a loop: the reset is what prevents it
        assert stuck(said(*[text] * (2 * CONTENT_THRESHOLD - 2)), GEMINI) is True


def test_various_list_table_and_heading_formats_reset_the_count() -> None:
    text = repetitive(1, CHUNK)
    formats = [
        "* Bullet item", "- Dash item", "+ Plus item", "1. Numbered item", "42. Another numbered item",
        "| Column 1 | Column 2 |", "|---|---|", "|++|++|", "+---+---+",
        "# H1 Heading", "## H2 Heading", "### H3 Heading", "#### H4 Heading", "##### H5 Heading", "###### H6 Heading",
    ]
    for index, structure in enumerate(formats):
        fresh = repetitive(index + 100, CHUNK)
        events = [*[text] * (CONTENT_THRESHOLD - 1), "\n" + structure + "\n", *[fresh] * (CONTENT_THRESHOLD - 1)]
        assert stuck(said(*events), GEMINI) is False, structure


def test_dividers_are_not_a_loop() -> None:
    assert stuck(said(*["-" * CHUNK] * (CONTENT_THRESHOLD + 5)), GEMINI) is False
    assert stuck(said(*["╭─" * (CHUNK // 2)] * (CONTENT_THRESHOLD + 5)), GEMINI) is False


def test_empty_content() -> None:
    assert stuck(said(""), GEMINI) is False


def test_a_tool_call_resets_the_content_count() -> None:
    steps = [*[agent("Some content.")] * 9, tool("testTool", param="value"), agent("Fresh content.")]
    assert stuck(steps, GEMINI) is False


# The reading of the content loop over whole messages: across consecutive agent messages with no
# user turn or tool call between them; a tool call or a user turn resets it.


def test_the_content_loop_runs_across_consecutive_agent_messages() -> None:
    text = repetitive(1, CHUNK)
    assert stuck([agent(text)] * CONTENT_THRESHOLD, GEMINI) is True
    half = [agent(text)] * (CONTENT_THRESHOLD // 2)
    assert stuck([*half, user("继续"), *half], GEMINI) is False
    assert stuck([*half, tool("testTool", param="value"), *half], GEMINI) is False
