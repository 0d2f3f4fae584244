"""A provider gap never loses an exchange: the model call is written with an error record beside it."""

from __future__ import annotations

from tracekit.proxy.records import underived


def test_underived_conversations_say_what_failed() -> None:
    record = underived("request", "TypeError: 'int' object is not iterable", 3, 1.0)
    assert record.kind == "error" and record.source == "proxy" and record.model_call == 3
    assert "TypeError" in record.message and "recorded as sent" in record.message
