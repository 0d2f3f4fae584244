"""Replay keys (what takes part in matching) and session stitching rules, without HTTP."""

from __future__ import annotations

from tracekit.proxy import SessionRegistry, first_difference, request_key
from tracekit.proxy.sessions import PendingTurn

ROUTE = "/v1/messages"
USER = {"role": "user", "content": "北京天气"}
REPLY = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "w", "input": {"c": "北京"}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "晴"}]}


def test_key_ignores_stream_key_order_and_volatile_fields_but_not_content() -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [USER], "metadata": {"user_id": "u-1"}}
    same = {"stream": True, "messages": [USER], "max_tokens": 10, "model": "m", "metadata": {"user_id": "u-2"}}
    assert request_key(ROUTE, body) == request_key(ROUTE, same)
    assert request_key(ROUTE, body) != request_key(ROUTE, {**body, "max_tokens": 11})
    assert request_key(ROUTE, body) != request_key("/v1/chat/completions", body)
    assert request_key(ROUTE, None, b"not json") != request_key(ROUTE, None, b"not json!")


def test_first_difference_is_a_deepdiff_path_with_both_values() -> None:
    recorded = {"model": "m", "messages": [USER, REPLY, RESULT]}
    live = {"model": "m", "messages": [USER, REPLY, {**RESULT, "content": [{**RESULT["content"][0], "content": "雨"}]}]}
    expected = "root['messages'][2]['content'][0]['content']: recorded '晴' != request '雨'"
    assert first_difference(recorded, live) == expected
    assert first_difference({"a": 1}, {"a": 1, "b": 2}).startswith("root['b']: only in the request")


def test_continuity_finds_the_session_a_request_extends() -> None:
    registry = SessionRegistry()
    first = registry.resolve("anthropic", "k1", [USER])
    assert first.how == "new"
    registry.advance(first.session, first.agent_chain, REPLY, [USER, REPLY], [USER, REPLY], "msg_1")
    second = registry.resolve("anthropic", "k2", [USER, REPLY, RESULT])
    assert (second.session, second.how) == (first.session, "continuity")
    # A request that does not start with the session's conversation plus reply is another session.
    other = registry.resolve("anthropic", "k3", [USER, RESULT])
    assert other.how == "new" and other.session is not first.session


def test_an_echoed_reply_with_extra_fields_still_continues_the_session() -> None:
    registry = SessionRegistry()
    first = registry.resolve("anthropic", "k1", [USER])
    registry.advance(first.session, first.agent_chain, REPLY, [USER, REPLY], [USER, REPLY], None)
    echoed = {"role": "assistant", "content": [{**REPLY["content"][0], "caller": None, "cache_control": {"t": 1}}]}
    assert registry.resolve("anthropic", "k2", [USER, echoed, RESULT]).session is first.session


def test_concurrent_identical_sessions_are_not_merged() -> None:
    registry = SessionRegistry()
    a = registry.resolve("anthropic", "k", [USER])
    b = registry.resolve("anthropic", "k", [USER])
    for resolution in (a, b):
        registry.advance(resolution.session, resolution.agent_chain, REPLY, [], [], None)
    # Both sessions now wait at the same conversation: two requests extending it go one to each.
    first = registry.resolve("anthropic", "k2", [USER, REPLY, RESULT])
    second = registry.resolve("anthropic", "k2", [USER, REPLY, RESULT])
    assert {first.session.id, second.session.id} == {a.session.id, b.session.id}


def test_thread_continuation_and_header_and_retry() -> None:
    registry = SessionRegistry()
    first = registry.resolve("anthropic", "k1", [USER])
    registry.advance(first.session, first.agent_chain, REPLY, [USER, REPLY], [USER, REPLY], "msg_1")
    thread = registry.resolve("anthropic", "k2", [RESULT], previous_id="msg_1")
    assert (thread.session, thread.how, thread.prior) == (first.session, "thread", [USER, REPLY])
    registry.set_pending(thread.session, PendingTurn("k2", 1, None, None))
    retry = registry.resolve("anthropic", "k2", [RESULT], retry_count=1)
    assert (retry.session, retry.how, retry.attempt) == (first.session, "retry", 2)
    named = registry.resolve("anthropic", "k9", [USER], named="team/agent 7")
    assert named.how == "header" and named.session.id == "team_agent_7"
    assert registry.resolve("anthropic", "k10", [USER], named="team/agent 7").session is named.session


def test_a_first_attempt_never_joins_another_sessions_failed_turn() -> None:
    registry = SessionRegistry()
    failing = registry.resolve("anthropic", "same", [USER], retry_count=0)
    registry.set_pending(failing.session, PendingTurn("same", 1, None, None))
    other_agent = registry.resolve("anthropic", "same", [USER], retry_count=0)
    assert other_agent.how == "new" and other_agent.session is not failing.session
    retry = registry.resolve("anthropic", "same", [USER], retry_count=1)
    assert (retry.session, retry.attempt) == (failing.session, 2)
    # Clients that send no retry count: the same request after a retryable failure is taken as a retry.
    registry.set_pending(failing.session, PendingTurn("same", 2, None, None))
    assert registry.resolve("anthropic", "same", [USER]).session is failing.session


def test_hop_by_hop_and_session_headers_are_not_forwarded_and_secrets_are_registered() -> None:
    from tracekit.proxy.headers import upstream_request_headers
    from tracekit.redact import Redactor

    redactor = Redactor()
    forwarded = upstream_request_headers(
        {"connection": "keep-alive, x-private-hop", "x-private-hop": "1", "keep-alive": "timeout=5",
         "x-tracekit-session": "s1", "host": "proxy", "content-length": "10", "x-api-key": "tk-secret-123456",
         "anthropic-version": "2023-06-01"}, redactor,
    )  # fmt: skip
    assert dict(forwarded) == {"x-api-key": "tk-secret-123456", "anthropic-version": "2023-06-01"}
    assert redactor.redact_text("key tk-secret-123456") == "key [REDACTED]"
