"""Helpers for provider tests: fixture files, and the official SDKs assembling SSE bytes over a local
mock transport (``httpx2.MockTransport``: no socket is opened)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai

DATA = Path(__file__).resolve().parents[1] / "data" / "providers"
CAPTURES = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "anthropic-sse"


def _client_transport(data: bytes) -> httpx2.Client:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    return httpx2.Client(transport=httpx2.MockTransport(handler))


def anthropic_sdk_assemble(data: bytes, *, beta: bool = False) -> dict[str, Any]:
    """What the anthropic SDK's MessageStream assembles from ``data`` (its ``get_final_message``)."""
    client = anthropic.Anthropic(api_key="test-key-not-real", http_client=_client_transport(data), max_retries=0)
    messages = client.beta.messages if beta else client.messages
    with messages.stream(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}]) as stream:
        for _ in stream:
            pass
        return stream.get_final_message().to_dict(mode="json")


def openai_sdk_assemble(data: bytes) -> dict[str, Any]:
    """What the openai SDK's ChatCompletionStream accumulates from ``data`` (its completion snapshot)."""
    client = openai.OpenAI(api_key="test-key-not-real", http_client=_client_transport(data), max_retries=0)
    with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}]) as stream:
        for _ in stream:
            pass
        return stream.current_completion_snapshot.to_dict(mode="json")


def without_nulls(value: Any) -> Any:
    """``value`` with null-valued object keys dropped: SDK models fill every optional field with null,
    so a key the SDK reports as null means the same as a key that is absent."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def load_bodies(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return result


def capture_files() -> list[Path]:
    """The real Anthropic captures (empty when the shared data is absent)."""
    if not CAPTURES.is_dir():
        return []
    return sorted(p for p in CAPTURES.iterdir() if p.suffix in (".txt", ".sse"))
