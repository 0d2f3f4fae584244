"""Many concurrent SDK sessions through one proxy: one complete trace each, nothing lost or interleaved."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anthropic
import pytest

from tracekit.proxy import recorder
from tracekit.testing import ToolUse, by_turn, text_reply, tool_use_reply

from .helpers import of_kind, recording, trace_records

SESSIONS = 20
TURNS = 10
SCRIPT = by_turn([*(tool_use_reply(ToolUse("step", {"n": n})) for n in range(TURNS - 1)), text_reply("完成")])


async def agent(client: anthropic.AsyncAnthropic, number: int) -> int:
    """Ten turns; half the sessions name themselves with x-tracekit-session, half are stitched by content.
    Every tool result carries the session's tag, so a record in the wrong trace would show."""
    tag = f"s{number:02d}"
    headers = {"x-tracekit-session": f"named-{tag}"} if number % 2 else {}
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"会话 {tag}"}]
    for turn in range(TURNS):
        kwargs: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": messages, "extra_headers": headers}
        if turn % 3 == 2:
            async with client.messages.stream(**kwargs) as stream:
                message = await stream.get_final_message()
        else:
            message = await client.messages.create(**kwargs)
        if message.stop_reason != "tool_use":
            return turn + 1
        messages.append({"role": "assistant", "content": message.content})
        result = {"type": "tool_result", "tool_use_id": message.content[0].id, "content": f"{tag} turn {turn}"}
        messages.append({"role": "user", "content": [result]})
        await asyncio.sleep(0)
    return TURNS


def test_twenty_concurrent_sessions_of_ten_turns_give_twenty_complete_traces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fewer open files than sessions: files are closed between exchanges and reopened, as in a long recording.
    monkeypatch.setattr(recorder, "MAX_OPEN_FILES", 4)
    with recording(SCRIPT, tmp_path) as (upstream, proxy):

        async def run_all() -> list[int]:
            client = anthropic.AsyncAnthropic(base_url=proxy.url, api_key="k", max_retries=0)
            return await asyncio.gather(*(agent(client, number) for number in range(SESSIONS)))

        turns = asyncio.run(run_all())
    assert turns == [TURNS] * SESSIONS
    assert len(upstream.requests) == SESSIONS * TURNS
    traces = trace_records(tmp_path)
    assert len(traces) == SESSIONS
    tags = set()
    for records in traces:
        user = of_kind(records, "user_message")
        assert len(user) == 1
        tag = user[0]["content"].split()[-1]
        tags.add(tag)
        calls = of_kind(records, "model_call")
        assert [c["index"] for c in calls] == list(range(TURNS))
        assert [m["message_index"] for m in of_kind(records, "assistant_message")] == list(range(1, 2 * TURNS, 2))
        results = of_kind(records, "tool_result")
        assert [r["content"] for r in results] == [f"{tag} turn {turn}" for turn in range(TURNS - 1)]
        assert [r["call_index"] for r in results] == list(range(TURNS - 1))
        named = int(tag[1:]) % 2 == 1
        assert records[0].get("session") == (f"named-{tag}" if named else None)
        assert {c["stitched"] for c in calls[1:]} == ({"header"} if named else {"continuity"})
    assert tags == {f"s{number:02d}" for number in range(SESSIONS)}
