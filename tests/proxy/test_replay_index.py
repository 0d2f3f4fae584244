"""The replay index: FIFO answers per key, recorded timing, fast lookups, and recording misses."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import anthropic
import pytest
from pytest import MonkeyPatch

from tracekit.proxy import ReplayIndex
from tracekit.proxy.answers import Answer
from tracekit.proxy.replayer import recorded_answer
from tracekit.testing import text_reply

from .helpers import of_kind, read_records, recording, replaying, trace_records

HELLO = [{"role": "user", "content": "你好"}]


def _ask(url: str, stream: bool = False) -> str:
    client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0)
    if stream:
        with client.messages.stream(model="m", max_tokens=10, messages=HELLO) as events:
            return events.get_final_text()
    return client.messages.create(model="m", max_tokens=10, messages=HELLO).content[0].text  # type: ignore[union-attr]


def test_identical_requests_are_answered_first_in_first_out_then_again(tmp_path: Path) -> None:
    with recording(["第一", "第二"], tmp_path) as (_, proxy):
        assert [_ask(proxy.url), _ask(proxy.url)] == ["第一", "第二"]
    assert len(trace_records(tmp_path)) == 2, "two identical first requests are two sessions"
    with replaying(tmp_path) as proxy:
        assert [_ask(proxy.url) for _ in range(3)] == ["第一", "第二", "第一"]


def test_recorded_timing_reproduces_first_byte_and_event_gaps(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    slow = text_reply("一二三四五六七八", chunk_size=2).delayed(first_byte=0.2, per_event=0.03)
    with recording([slow], tmp_path) as (_, proxy):
        _ask(proxy.url, stream=True)
    (records,) = trace_records(tmp_path)
    (call,) = of_kind(records, "model_call")
    assert call["ttft_ms"] >= 200 and call["event_offsets_ms"][-1] >= 200 + 30 * (len(call["event_offsets_ms"]) - 2)
    recorded_total = call["event_offsets_ms"][-1] / 1000
    with replaying(tmp_path, timing="recorded") as proxy:
        started = time.perf_counter()
        assert _ask(proxy.url, stream=True) == "一二三四五六七八"
        timed = time.perf_counter() - started
    assert timed >= recorded_total * 0.9  # a lower bound: the waits hold whatever the machine's load
    # What each timing waits, read off the answer's own waits (no clock: the instant answer must not wait at all).
    [[recorded]] = ReplayIndex.load(tmp_path).answers.values()
    waits: list[float] = []

    async def counted_sleep(seconds: float) -> None:
        waits.append(seconds)

    async def events(answer: Answer) -> list[bytes]:
        return [chunk async for chunk in answer.chunks()]

    monkeypatch.setattr(asyncio, "sleep", counted_sleep)
    instant = asyncio.run(events(recorded_answer(recorded, True, "instant")))
    assert waits == []
    assert asyncio.run(events(recorded_answer(recorded, True, "recorded"))) == instant
    assert sum(waits) == pytest.approx(recorded_total, abs=0.002) and waits[0] >= 0.2


def test_lookups_find_each_of_20000_answers_by_key(tmp_path: Path) -> None:
    """Every key of a large index finds its answer (how fast: benchmarks/results/replay_scale.md)."""
    with recording([text_reply("好")], tmp_path) as (_, proxy):
        _ask(proxy.url)
    index = ReplayIndex.load(tmp_path)
    (path,) = tmp_path.glob("*.jsonl")
    (call,) = of_kind(read_records(path), "model_call")
    template = index.answers[call["request_key"]][0]
    for number in range(20000):
        index.add(f"key-{number}", template)
    assert all(index.lookup(f"key-{number}") is template for number in range(20000))
    assert index.lookup("absent") is None


def test_on_miss_record_asks_upstream_and_writes_the_new_branch(tmp_path: Path) -> None:
    with recording(["你好！"], tmp_path) as (_, proxy):
        _ask(proxy.url)
    with recording(["新的分支"], tmp_path / "unused") as (upstream, _):
        with replaying(tmp_path, on_miss="record", upstream=upstream.url) as proxy:
            client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
            hit = client.messages.create(model="m", max_tokens=10, messages=HELLO)
            branch = client.messages.create(
                model="m", max_tokens=10,
                messages=[*HELLO, {"role": "assistant", "content": hit.content}, {"role": "user", "content": "再说"}],
            )  # fmt: skip
        assert len(upstream.requests) == 1, "only the miss went upstream"
    assert branch.content[0].text == "新的分支"  # type: ignore[union-attr]
    traces = trace_records(tmp_path)
    assert len(traces) == 2
    new = next(records for records in traces if records[0]["source"] == "replay")
    calls = of_kind(new, "model_call")
    assert [c.get("replayed", False) for c in calls] == [True, False]
    with replaying(tmp_path) as proxy:
        client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
        client.messages.create(model="m", max_tokens=10, messages=HELLO)
        again = client.messages.create(
            model="m", max_tokens=10,
            messages=[*HELLO, {"role": "assistant", "content": hit.content}, {"role": "user", "content": "再说"}],
        )  # fmt: skip
        assert proxy.proxy.misses == []
    assert again == branch
