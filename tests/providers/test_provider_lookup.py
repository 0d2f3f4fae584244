"""Finding a provider by request path or by name; both modules satisfy the Provider protocol."""

from __future__ import annotations

import pytest

from tracekit.providers import PROVIDERS, anthropic, get_provider, openai, provider_for_path


def test_provider_for_path() -> None:
    assert provider_for_path("/v1/messages") is anthropic
    assert provider_for_path("/v1/messages?beta=true") is anthropic
    assert provider_for_path("/v1/chat/completions/") is openai
    assert provider_for_path("/openai/v1/chat/completions") is openai
    assert provider_for_path("/v1/models") is None


def test_get_provider() -> None:
    assert get_provider("openai") is openai
    with pytest.raises(KeyError, match="known: anthropic, openai"):
        get_provider("gemini")


def test_every_provider_has_the_same_functions() -> None:
    names = {"NAME", "ROUTE", "request_conversation", "request_model", "request_stream", "response_to_canonical",
             "canonical_to_response", "response_message", "response_usage", "response_stop_reason",
             "response_model", "response_error", "error_body", "stream_assembler", "assemble_stream",
             "render_stream"}
    for name, provider in PROVIDERS.items():
        assert name == provider.NAME
        assert names <= set(dir(provider)), name
