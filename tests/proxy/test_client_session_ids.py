"""Reading the session ids clients send (``tracekit.proxy.client_sessions``), each form its client sends."""

from __future__ import annotations

import json

from tracekit.proxy.client_sessions import ClientSession, asks_structured_output, client_session, user_id_session

UUID = "0b6c1f9e-3a2d-4c5b-8e7f-112233445566"


def test_the_forms_of_claude_codes_user_id() -> None:
    assert user_id_session(json.dumps({"device_id": "ab" * 32, "account_uuid": "", "session_id": UUID})) == UUID
    assert user_id_session(f"user_{'ab' * 32}_account__session_{UUID}") == UUID
    assert user_id_session(f"user_{'ab' * 32}_account_{UUID}_session_{UUID}") == UUID
    for other in ("someone@example.com", "{not json", json.dumps({"session_id": 3}), None, "user_x_session_"):
        assert user_id_session(other) is None


def test_headers_first_in_their_order_then_the_body() -> None:
    both = {"session-id": "s", "thread-id": "t"}
    assert client_session(both, None) == ClientSession("t", "thread-id")
    assert client_session({"session_id": "old"}, None) == ClientSession("old", "session_id")
    assert client_session({"x-claude-code-session-id": UUID, "x-claude-code-agent-id": "a1"}, None) == ClientSession(
        f"{UUID}.agent-a1", "x-claude-code-session-id", tools_every_turn=True
    )
    body = {"client_metadata": {"session_id": "s", "thread_id": "t"}}
    assert client_session({"x-openai-subagent": "compact"}, body) == ClientSession("t", "client_metadata.thread_id",
                                                                                  "compact")  # fmt: skip
    assert client_session({"x-openai-subagent": "review"}, {}) is None
    assert client_session({"session-id": "x" * 300}, {}) is None, "too long to be a session id"
    assert client_session({"session-id": "  "}, {"metadata": {"user_id": "plain"}}) is None


def test_structured_output_in_each_wire() -> None:
    assert asks_structured_output({"output_format": {"type": "json_schema", "schema": {}}})
    assert asks_structured_output({"output_config": {"format": {"type": "json_schema"}}})
    assert asks_structured_output({"response_format": {"type": "json_schema", "json_schema": {}}})
    assert asks_structured_output({"text": {"format": {"type": "json_schema"}}})
    assert not asks_structured_output({"response_format": {"type": "text"}, "text": {"format": {"type": "text"}}})
