"""Test helpers shipped with tracekit: a scripted fake model API that speaks the three wire protocols.

``FakeUpstream`` serves ``POST /v1/messages`` (Anthropic Messages), ``POST /v1/chat/completions`` (OpenAI
Chat Completions) and ``POST /v1/responses`` (OpenAI Responses, ``previous_response_id`` included) on
loopback, as JSON or SSE as each request asks, answering from a script::

    from tracekit.testing import FakeUpstream, ToolUse, text_reply, tool_use_reply, error_reply

    script = [
        error_reply(529, should_retry=True, retry_after_ms=10),   # the SDK retries this one
        tool_use_reply(ToolUse("get_weather", {"city": "北京"}), text="我查一下。"),
        text_reply("北京今天晴。"),
    ]
    with FakeUpstream(script) as up:
        client = anthropic.Anthropic(base_url=up.url, api_key="x")        # openai: base_url=up.openai_url
        ...
        assert len(up.requests) == 3

A script is a list of replies (strings are text replies) consumed in order, a mapping
``{"anthropic": [...], "openai": [...]}`` with one queue per provider, or a function
``(FakeRequest) -> Reply``; ``by_turn([...])`` answers by the conversation's turn, which keeps concurrent
sessions deterministic. ``load_script(path)`` reads a YAML or JSON script file (``tracekit fake-upstream``).

Faults: ``error_reply`` (status, provider error body, ``x-should-retry``, ``retry-after-ms``,
``retry-after``), ``connection_reset()``, ``reply.cut_after(n)`` (stream cut mid-event),
``reply.error_after(n)`` (in-stream error event), ``reply.delayed(first_byte, per_event)``.

Ids are counters (``msg_fake_0001``, ``toolu_fake_0001``, ``chatcmpl-fake0001``, ``call_fake_0001``,
``req_fake_0001``) and token counts are fake (about one token per four characters), both deterministic.
Anthropic thread continuations (the anthropic SDK 2.x tool runner's ``thread``) are answered against
the stored conversation.

``FakeModelClient`` puts a script behind a model name (``tracekit.clients``), so that ``tracekit run`` and
the judge talk to a fake upstream exactly as they talk to a model API::

    from tracekit.clients import register_model_client
    from tracekit.testing import FakeModelClient

    @register_model_client("canned")
    def canned(model: str) -> FakeModelClient:
        return FakeModelClient(["好的，已经查到了。"])   # every use (a run's job, a judge) gets its own server

    # tracekit run B2-TS --model canned:hello --out runs/canned
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracekit._fake.replies import (
    Block,
    ConnectionReset,
    ErrorReply,
    MessageReply,
    RedactedThinking,
    Reply,
    StreamFault,
    Text,
    Thinking,
    ToolUse,
    Usage,
    connection_reset,
    error_reply,
    fault,
    message_reply,
    text_reply,
    tool_use_reply,
)
from tracekit._fake.request import FakeRequest, Provider
from tracekit._fake.script import Script, ScriptFunction, ScriptLike, by_turn
from tracekit._fake.server import FakeUpstream
from tracekit._fake.spec import ScriptError, load_script, script_from_data
from tracekit.clients import Endpoint, ModelClient, ModelUse

#: The API key a fake model's requests carry (the fake upstream takes any key).
FAKE_API_KEY = "tracekit-fake-no-key"


class FakeEndpoint(Endpoint):
    """A ``FakeUpstream`` serving one use of a model; closing the endpoint stops the server."""

    def __init__(self, script: ScriptLike, meta: Mapping[str, Any] | None = None) -> None:
        self.upstream = FakeUpstream(script).start()
        super().__init__(self.upstream.url, meta)

    def errors(self) -> list[str]:
        """The exceptions a script function raised (each request was answered with a 500)."""
        return [f"{type(exc).__name__}: {exc}" for exc in self.upstream.errors]

    def close(self) -> None:
        self.upstream.close()


class FakeModelClient(ModelClient):
    """A stand-in model answered by a fake upstream that runs ``script`` (see the module docstring).

    Each ``open`` starts a server of its own with the script (a list is consumed afresh each time). For a
    script that depends on the use (the case being run), subclass and override ``script_for``.
    """

    simulated = True
    api_key = FAKE_API_KEY

    def __init__(self, script: ScriptLike = ()) -> None:
        self.script = script

    def script_for(self, use: ModelUse) -> ScriptLike:
        """The script for ``use``: ``script`` by default."""
        return self.script

    def open(self, use: ModelUse) -> FakeEndpoint:
        """A fake upstream answering with ``script_for(use)``."""
        return FakeEndpoint(self.script_for(use))

__all__ = [
    "FAKE_API_KEY",
    "Block",
    "ConnectionReset",
    "ErrorReply",
    "FakeEndpoint",
    "FakeModelClient",
    "FakeRequest",
    "FakeUpstream",
    "MessageReply",
    "Provider",
    "RedactedThinking",
    "Reply",
    "Script",
    "ScriptError",
    "ScriptFunction",
    "ScriptLike",
    "StreamFault",
    "Text",
    "Thinking",
    "ToolUse",
    "Usage",
    "by_turn",
    "connection_reset",
    "error_reply",
    "fault",
    "load_script",
    "message_reply",
    "script_from_data",
    "text_reply",
    "tool_use_reply",
]
