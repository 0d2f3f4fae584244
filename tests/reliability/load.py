"""The load: concurrent agent sessions driving the official SDKs, and an upstream that injects faults.

``FaultPlan`` is the fake upstream's script: for each request it draws, from an RNG seeded with the run's
seed and the request's key, one of ``FAULT_WEIGHTS`` and a reply (text of a random length mixing Chinese
and ASCII cut into random chunk sizes, or a tool call). The same seed gives the same plan whatever the
interleaving of the sessions.

``run_session`` is one agent: ``turns`` turns of one conversation through the anthropic or the openai SDK
(JSON or stream, drawn per turn), sending tool results after tool calls. When the SDK gives up on a
turn (after its own retries), the agent tries the turn again (up to ``AGENT_ATTEMPTS`` times) and then
moves on.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
import openai

from tracekit.testing import FakeRequest, Reply, ToolUse, connection_reset, error_reply, text_reply, tool_use_reply

from .support import TURN_HEADER, CapturingTransport, request_key

AGENT_ATTEMPTS = 3
SDK_RETRIES = 2

#: Fault kind -> weight (per request). "ok" and "slow" succeed; the rest are the issue's faults.
FAULT_WEIGHTS: dict[str, int] = {
    "ok": 60,
    "slow": 6,  # slow first token: 30-150 ms before the first byte
    "429_retry_after_ms": 4,
    "429": 2,
    "500": 3,
    "500_final": 2,  # x-should-retry: false, the SDK gives up at once
    "529_retry_after_ms": 4,
    "529": 2,
    "reset": 5,  # connection closed without a response
    "cut": 6,  # stream cut mid-event (a JSON body cut mid-way)
    "stream_error": 6,  # in-stream error event (an HTTP error for a JSON request)
}
#: Requests of the latency probe (``probe.py``) are answered without faults.
PROBE_PREFIX = "probe:"
SUCCESS_KINDS = frozenset({"ok", "slow"})
FRAGMENTS = (
    "北京到上海的航班",
    "明天下午三点",
    "ok, ",
    "价格 ¥1,280 ",
    "🚄 高铁更快 ",
    "seat 12A; ",
    "「已确认」",
    "\n",
)
STREAM_ERROR_MESSAGE = "上游过载，请稍后再试"
LOAD_ERRORS = (anthropic.APIError, openai.APIError, httpx2.TransportError)


class FaultPlan:
    """The fake upstream's script function: a seeded fault and reply per request (see the module doc)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.kinds: dict[tuple[str, int], str] = {}

    def __call__(self, request: FakeRequest) -> Reply:
        key = request_key(request.headers)
        if key[0].startswith(PROBE_PREFIX):
            self.kinds[key] = "probe"
            return text_reply("探针：" + "0123456789" * 20, chunk_size=16)
        rng = random.Random(f"{self.seed}|{key[0]}|{key[1]}")
        kind = rng.choices(list(FAULT_WEIGHTS), weights=list(FAULT_WEIGHTS.values()))[0]
        self.kinds[key] = kind
        reply = _message(rng)
        if kind == "slow":
            return reply.delayed(first_byte=rng.uniform(0.03, 0.15))
        if kind == "reset":
            return connection_reset()
        if kind == "cut":
            return reply.cut_after(rng.randint(1, 6))
        if kind == "stream_error":
            return reply.error_after(rng.randint(1, 5), type="overloaded_error", message=STREAM_ERROR_MESSAGE)
        if kind != "ok":
            status = int(kind.split("_")[0])
            retry_after_ms = rng.randint(5, 40) if kind.endswith("retry_after_ms") else None
            should_retry = False if kind.endswith("final") else None
            return error_reply(status, retry_after_ms=retry_after_ms, should_retry=should_retry)
        return reply


def _message(rng: random.Random) -> Any:
    chunk_size = rng.randint(6, 40)
    if rng.random() < 0.3:
        calls = [
            ToolUse("search_flights", {"from": "北京", "to": "上海", "date": "2026-04-17", "n": rng.randint(1, 9)})
        ]
        if rng.random() < 0.3:
            calls.append(ToolUse("get_weather", {"city": "上海"}))
        return tool_use_reply(calls, text="我查一下。", chunk_size=chunk_size)
    text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(3, 60)))
    return text_reply(text, chunk_size=chunk_size)


@dataclass
class SessionResult:
    """What one agent session went through."""

    name: str
    provider: str
    turns_done: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    completed: list[tuple[str, float]] = field(default_factory=list)
    """(response id, perf-counter time the SDK returned it) of every turn that got a whole reply."""


@dataclass
class LoadClients:
    """One anthropic and one openai async client sharing a capturing transport."""

    transport: CapturingTransport
    anthropic: anthropic.AsyncAnthropic
    openai: openai.AsyncOpenAI

    @classmethod
    def create(cls, url: str, *, api_key: str = "load-test-key") -> LoadClients:
        limits = httpx2.Limits(max_connections=200, max_keepalive_connections=200)
        transport = CapturingTransport(httpx2.AsyncHTTPTransport(limits=limits))
        http = httpx2.AsyncClient(transport=transport, timeout=httpx2.Timeout(30.0))
        return cls(
            transport,
            anthropic.AsyncAnthropic(base_url=url, api_key=api_key, max_retries=SDK_RETRIES, http_client=http),
            openai.AsyncOpenAI(base_url=url + "/v1", api_key=api_key, max_retries=SDK_RETRIES, http_client=http),
        )

    async def aclose(self) -> None:
        """Close both clients (and the shared transport)."""
        await self.anthropic.close()
        await self.openai.close()


async def run_session(
    clients: LoadClients,
    name: str,
    provider: str,
    turns: int,
    seed: int,
    stop: asyncio.Event | None = None,
    result: SessionResult | None = None,
) -> SessionResult:
    """One agent session of ``turns`` turns (see the module docstring); ends early when ``stop`` is set.
    ``result`` (created here when not given) is filled in as the session goes."""
    rng = random.Random(f"{seed}|{name}|agent")
    result = result or SessionResult(name, provider)
    conversation: list[dict[str, Any]] = []
    pending_tools: list[str] = []
    for turn in range(turns):
        if stop is not None and stop.is_set():
            break
        conversation.extend(_next_input(provider, name, turn, pending_tools))
        stream = rng.random() < 0.5
        for attempt in range(AGENT_ATTEMPTS):
            if stop is not None and stop.is_set():
                break
            headers = {"x-tracekit-session": name, TURN_HEADER: f"{name}:t{turn}:a{attempt}"}
            try:
                if provider == "anthropic":
                    message, response_id, pending_tools = await _anthropic_turn(clients, conversation, stream, headers)
                else:
                    message, response_id, pending_tools = await _openai_turn(clients, conversation, stream, headers)
            except LOAD_ERRORS as exc:
                result.failures[type(exc).__name__] += 1
                continue
            conversation.append(message)
            result.completed.append((response_id, time.perf_counter()))
            break
        else:
            pending_tools = []
        result.turns_done = turn + 1
    return result


def _next_input(provider: str, name: str, turn: int, pending_tools: list[str]) -> list[dict[str, Any]]:
    if not pending_tools:
        return [{"role": "user", "content": f"[{name} 第{turn}轮] 帮我订一张明天去上海的票"}]
    if provider == "anthropic":
        results = [
            {"type": "tool_result", "tool_use_id": tool_id, "content": f"结果 {turn}"} for tool_id in pending_tools
        ]
        return [{"role": "user", "content": results}]
    return [{"role": "tool", "tool_call_id": tool_id, "content": f"结果 {turn}"} for tool_id in pending_tools]


async def _anthropic_turn(
    clients: LoadClients, conversation: list[dict[str, Any]], stream: bool, headers: dict[str, str]
) -> tuple[dict[str, Any], str, list[str]]:
    options: dict[str, Any] = {"model": "claude-load", "max_tokens": 256, "messages": conversation,
                               "extra_headers": headers}  # fmt: skip
    if stream:
        async with clients.anthropic.messages.stream(**options) as events:
            message = await events.get_final_message()
    else:
        message = await clients.anthropic.messages.create(**options)
    content: list[dict[str, Any]] = []
    tools: list[str] = []
    for block in message.content:
        if block.type == "text":
            content.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
            tools.append(block.id)
    return {"role": "assistant", "content": content}, message.id, tools


async def _openai_turn(
    clients: LoadClients, conversation: list[dict[str, Any]], stream: bool, headers: dict[str, str]
) -> tuple[dict[str, Any], str, list[str]]:
    # The openai SDK transforms ``messages`` param by param (about 2 ms per message here, most of the load's
    # CPU at 40 turns); the history goes in ``extra_body`` instead, which the SDK sends as is.
    options: dict[str, Any] = {"model": "gpt-load", "messages": [], "extra_body": {"messages": conversation},
                               "extra_headers": headers}  # fmt: skip
    text: str | None
    if stream:
        chunks = await clients.openai.chat.completions.create(stream=True, **options)
        response_id, parts = "", []
        calls: dict[int, dict[str, str]] = {}
        async for chunk in chunks:
            response_id = chunk.id
            for choice in chunk.choices:
                if choice.delta.content:
                    parts.append(choice.delta.content)
                for delta in choice.delta.tool_calls or []:
                    call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                    call["id"] = delta.id or call["id"]
                    if delta.function is not None:
                        call["name"] += delta.function.name or ""
                        call["arguments"] += delta.function.arguments or ""
        text = "".join(parts) or None
        tool_calls = [calls[index] for index in sorted(calls)]
    else:
        completion = await clients.openai.chat.completions.create(**options)
        response_id, reply = completion.id, completion.choices[0].message
        text = reply.content
        tool_calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                      for c in reply.tool_calls or [] if c.type == "function"]  # fmt: skip
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in tool_calls
        ]
    return message, response_id, [c["id"] for c in tool_calls]
