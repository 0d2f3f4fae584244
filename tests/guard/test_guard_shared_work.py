"""The guard's work per request is what is new in it: the proxy derives each request's message fingerprints
once (``Conversation.fingerprints``, each reply's ``Outcome.reply_fingerprint``; a message seen in an earlier
request comes from ``SEEN_MESSAGES``) and the session registry, the recording and the guard share them, so a
guarded proxy hashes no message more than a plain one does."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import anthropic
import pytest

import tracekit.proxy.exchange
import tracekit.proxy.request
import tracekit.proxy.sessions
import tracekit.trace.builder
from tracekit.guard import GuardConfig, LiveGuard
from tracekit.guard.session import GuardSession
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.proxy.request import SeenMessages
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, ToolUse, text_reply, tool_use_reply
from tracekit.trace.builder import TraceBuilder, message_fingerprint
from tracekit.trace.models import Header

TOOLS = [{"name": "lookup", "description": "look up", "input_schema": {"type": "object"}}]
TURNS = 6
MODULES = (tracekit.trace.builder, tracekit.proxy.request, tracekit.proxy.sessions, tracekit.proxy.exchange)


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each message was fingerprinted (by its fingerprint), whoever asked."""
    counts: Counter[str] = Counter()

    def counting(message: dict[str, Any]) -> str:
        fingerprint = message_fingerprint(message)
        counts[fingerprint] += 1
        return fingerprint

    for module in MODULES:
        monkeypatch.setattr(module, "message_fingerprint", counting)
    return counts


def run_session(out: Path, guard: LiveGuard | None) -> int:
    """A session of ``TURNS`` requests whose conversation grows by a tool round trip each; the number of
    messages the requests carried plus the replies."""
    script = [tool_use_reply(ToolUse("lookup", {"q": i})) for i in range(TURNS - 1)] + [text_reply("好")]
    carried = 0
    with FakeUpstream(script) as upstream:
        config = ProxyConfig(upstream=upstream.url, out_dir=out, redactor=Redactor(), observer=guard)
        with RunningProxy(config) as proxy:
            client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
            messages: list[dict[str, Any]] = [{"role": "user", "content": "查一下"}]
            for turn in range(TURNS):
                carried += len(messages) + 1  # the request's messages, and its reply
                reply = client.messages.create(model="m", max_tokens=64, messages=messages, tools=TOOLS)  # type: ignore[arg-type]
                calls = [block for block in reply.content if block.type == "tool_use"]
                if not calls:
                    break
                messages += [{"role": "assistant", "content": [calls[0].model_dump()]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": calls[0].id,
                                                           "content": f"结果 {turn}"}]}]  # fmt: skip
            proxy.wait_written()
    return carried


def test_a_guarded_proxy_fingerprints_each_message_of_a_request_once_as_a_plain_one_does(
    tmp_path: Path, hashed: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tracekit.proxy.request, "SEEN_MESSAGES", SeenMessages())
    carried = run_session(tmp_path / "plain", None)
    plain = hashed.copy()
    hashed.clear()
    monkeypatch.setattr(tracekit.proxy.request, "SEEN_MESSAGES", SeenMessages())  # as cold as the first proxy
    guard = LiveGuard(GuardConfig.model_validate({"findings": {"repeated_call": {"action": "warn"}}}))
    assert run_session(tmp_path / "guarded", guard) == carried
    # Stitching, recording and guard share the fingerprints (before, the recorder's and the guard's trace
    # builders hashed every message of every request again), and a message the proxy saw in an earlier request
    # is not hashed again (a reply is hashed as it comes and once more as the SDK re-sends it): the same
    # messages, as many times, with the guard as without it, and fewer than the messages the requests carried.
    assert hashed == plain
    assert sum(hashed.values()) < carried and max(hashed.values()) <= 2
    (session,) = guard.sessions.values()
    assert session.model_calls == TURNS and session.tool_calls == TURNS - 1
    paths = [sorted((tmp_path / name).glob("*.jsonl")) for name in ("plain", "guarded")]
    assert all(len(found) == 1 for found in paths)


def test_given_the_fingerprints_the_guard_derives_only_the_new_messages(hashed: Counter[str]) -> None:
    session = GuardSession("s", GuardConfig(), GuardConfig().detector_options(), started=0.0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "查"}]
    fingerprints = [message_fingerprint(m) for m in messages]  # the proxy's (this name is not the counted one)
    derived = []
    for turn in range(50):
        before = len(session.builder.records)
        session.on_request(messages, None, float(turn), fingerprints)
        reply = {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{turn}", "name": "lookup",
                                                   "input": {"q": turn}}]}  # fmt: skip
        reply_fingerprint = message_fingerprint(reply)
        result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{turn}", "content": "晴"}]}
        session.on_answer(reply, None, float(turn), False, reply_fingerprint)
        derived.append(len(session.builder.records) - before)
        messages = [*messages, reply, result]
        fingerprints = [*fingerprints, reply_fingerprint, message_fingerprint(result)]
    session.on_request(messages, None, 50.0, fingerprints)
    assert sum(hashed.values()) == 0  # the guard hashed nothing itself
    # Each request adds the same few records however long the conversation is: its tool result, the model
    # call, the reply and its tool call (the first request: the user's message instead of a result).
    assert set(derived[1:]) == {4} and derived[0] == 4
    assert session.tool_calls == 50


def test_given_fingerprints_a_builder_records_what_it_records_without_them_history_rewrites_included() -> None:
    def tool_round(n: int) -> list[dict[str, Any]]:
        call = {"type": "tool_use", "id": f"t{n}", "name": "lookup", "input": {"q": n}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"结果 {n}"}
        return [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]

    first = [{"role": "user", "content": "查一下"}, *tool_round(0), *tool_round(1)]
    rewritten = [{"role": "user", "content": "查一下"}, *tool_round(0), {"role": "user", "content": "换个问法"}]
    requests = [first[:1], first[:3], first, rewritten, [*rewritten, *tool_round(2)], first[:3]]
    records = []
    for shared in (False, True):
        builder = TraceBuilder(Header(trace_id="t", source="test", t=0.0))
        for number, messages in enumerate(requests):
            fingerprints = [message_fingerprint(m) for m in messages] if shared else None
            builder.add_conversation(messages, "系统", timestamp=float(number), fingerprints=fingerprints)
        records.append([record.model_dump() for record in builder.records])
    assert records[0] == records[1]
    kinds = [r["kind"] for r in records[1]]
    assert (kinds.count("user_message"), kinds.count("tool_call")) == (2, 3)  # the rewrite recorded, t2 after it
