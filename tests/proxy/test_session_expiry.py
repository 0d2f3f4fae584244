"""Idle sessions expire (issue 27 C / issue 31 item 3): their trace is finished on disk, the proxy and the
guard forget them, and a named session that comes back continues in a new file whose header names the old
one. The clients are the real anthropic SDK; expiry is asked for at a point of the test (``expire_idle(0)``),
the periodic sweep does the same on its own."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import anthropic

from tracekit.guard.observer import LiveGuard
from tracekit.testing import FakeRequest

from .helpers import kinds, read_records, recording


def _ask(url: str, text: str, session: str | None = None, history: list | None = None) -> str:
    client = anthropic.Anthropic(base_url=url, api_key="tk-expiry-key-0001", max_retries=0)
    messages = [*(history or []), {"role": "user", "content": text}]
    headers = {"x-tracekit-session": session} if session else {}
    reply = client.messages.create(model="claude-x", max_tokens=16, messages=messages, extra_headers=headers)
    return reply.content[0].text  # type: ignore[union-attr]


def test_an_idle_named_session_is_closed_and_continues_in_a_linked_file(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    guard = LiveGuard()
    with recording(["一", "二", "三"], out, observer=guard) as (_, proxy):
        _ask(proxy.url, "第一句", "agent")
        history = [{"role": "user", "content": "第一句"}, {"role": "assistant", "content": "一"}]
        _ask(proxy.url, "第二句", "agent", history)
        assert proxy.expire_idle(0) == 1
        tracker = proxy.proxy.tracker
        assert tracker.sessions == [] and guard.sessions == {}
        assert tracker.recorder is not None and tracker.recorder.traces == []
        first = read_records(out / "agent.jsonl")  # complete on disk while the proxy still runs
        assert kinds(first).count("model_call") == 2
        _ask(proxy.url, "回来了", "agent")
    second = read_records(out / "agent-2.jsonl")
    assert second[0]["meta"]["continues"] == "agent.jsonl"
    assert kinds(second).count("model_call") == 1
    assert kinds(read_records(out / "agent.jsonl")) == kinds(first), "the closed file is left as it was"


def test_a_busy_session_is_not_expired_and_a_stitched_one_starts_again_whole(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    with recording(["一", "二"], out) as (_, proxy):
        _ask(proxy.url, "你好")
        assert proxy.expire_idle(3600) == 0, "not idle for an hour"
        assert proxy.expire_idle(0) == 1
        _ask(proxy.url, "还在吗", history=[{"role": "user", "content": "你好"}, {"role": "assistant", "content": "一"}])
    files = sorted(out.glob("*.jsonl"))
    assert len(files) == 2
    later = read_records(files[1])  # the agent re-sent its history: the new trace holds it whole
    assert [r["content"] for r in later if r["kind"] == "user_message"] == ["你好", "还在吗"]
    assert kinds(later).count("model_call") == 1


def test_a_key_learnt_after_a_session_expired_is_scrubbed_from_its_file_at_close(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    late_key = "tk-expired-late-key-7319x051123q"
    with recording(["一", "二"], out) as (_, proxy):
        _ask(proxy.url, f"先记下这个 key：{late_key}", "early")
        assert proxy.expire_idle(0) == 1  # closed and scrubbed with what was known then: not this key
        assert late_key in (out / "early.jsonl").read_text(encoding="utf-8")
        client = anthropic.Anthropic(base_url=proxy.url, api_key=late_key, max_retries=0)
        client.messages.create(model="claude-x", max_tokens=8, messages=[{"role": "user", "content": "你好"}])
    # The expired session's path was kept (on disk) for the scrub at close, with every secret learnt since.
    early = (out / "early.jsonl").read_text(encoding="utf-8")
    assert late_key not in early and "[REDACTED]" in early


def test_the_upstream_pool_is_closed_only_when_expiry_leaves_nothing_to_answer(tmp_path: Path) -> None:
    held, go = threading.Event(), threading.Event()

    def script(request: FakeRequest) -> str:
        if "慢一点" in json.dumps(request.body, ensure_ascii=False):
            held.set()
            go.wait(30)
        return "好"

    with recording(script, tmp_path / "rec") as (_, proxy):
        upstream = proxy.proxy.upstream
        assert upstream is not None
        _ask(proxy.url, "第一个")
        answers: list[str] = []
        slow = threading.Thread(target=lambda: answers.append(_ask(proxy.url, "慢一点")))
        slow.start()
        assert held.wait(30)
        assert proxy.expire_idle(0) == 1, "the first session only: the other is mid-exchange"
        assert upstream.pool_open
        go.set()
        slow.join(30)
        assert answers == ["好"]
        assert proxy.expire_idle(0) == 1
        assert not upstream.pool_open, "nothing left to answer: the kept-alive connections are let go"
        assert _ask(proxy.url, "又来了") == "好"  # the next request opens the pool again
        assert upstream.pool_open
