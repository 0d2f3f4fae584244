"""The sanitizer replaces known key formats and registered secrets, and keeps JSON valid."""

from __future__ import annotations

import orjson

from tracekit.redact import REPLACEMENT, Redactor


def test_key_formats_and_registered_values_are_replaced() -> None:
    redactor = Redactor()
    redactor.add_secret("Bearer my-very-secret-token-123")
    text = orjson.dumps({
        "a": "sk-ant-api03-abcdefghijklmnop",
        "b": "key sk-proj-ABCDEFGHIJKLMNOPQRSTUV end",
        "c": "my-very-secret-token-123",
        "d": "中文保持不变",
    })
    out = redactor.redact_bytes(text)
    assert b"sk-ant" not in out and b"sk-proj" not in out and b"my-very-secret" not in out
    assert orjson.loads(out)["d"] == "中文保持不变"
    assert orjson.loads(out)["a"] == REPLACEMENT


def test_regex_secrets_and_short_values() -> None:
    redactor = Redactor(secrets=["re:acct-[0-9]{6}", "short"])
    assert redactor.redact_text("id acct-123456 short") == f"id {REPLACEMENT} short"


def test_unusable_pattern_is_a_clear_error() -> None:
    import pytest

    from tracekit.errors import TracekitError

    with pytest.raises(TracekitError, match="scoped"):
        Redactor(secrets=["re:(?i)token"])
    assert Redactor(secrets=["re:(?i:token-[0-9]+)"]).redact_text("TOKEN-42") == REPLACEMENT


def test_text_without_any_needle_is_returned_as_is_and_mixed_case_bearer_still_caught() -> None:
    redactor = Redactor(secrets=["literal-secret-value"])
    text = "nothing to see here " * 100
    assert redactor.redact_text(text) is text
    assert REPLACEMENT in redactor.redact_text("Authorization: BEARER abcdefghijkl")
    assert redactor.redact_bytes(b"x literal-secret-value y") == f"x {REPLACEMENT} y".encode()
    custom = Redactor(secrets=["re:acct-[0-9]{6}"])
    assert custom.redact_text("acct-123456") == REPLACEMENT
