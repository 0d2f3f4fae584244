"""How the reference agent asks for its turns: the official anthropic and openai SDKs behind one interface.

A ``TurnClient`` talks to the job's proxy in the run's wire protocol; where the proxy sends the requests
on is the model client's business (``tracekit.clients``), not the agent's.

The agent keeps its conversation in Anthropic message form; ``OpenAITurnClient`` converts it to Chat
Completions messages for each request and the reply back. Both send the run's ``x-tracekit-session``
header so the proxy files every request of a job under one trace.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from tracekit.constants import SESSION_HEADER
from tracekit.providers import openai as openai_provider

if TYPE_CHECKING:
    import anthropic
    import openai

_SDK = TypeVar("_SDK")


@dataclass
class ModelTurn:
    """One assistant turn: Anthropic-shaped content blocks, why it stopped, tokens it used."""

    content: list[dict[str, Any]]
    stop_reason: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        """The tool_use blocks, in order."""
        return [block for block in self.content if block.get("type") == "tool_use"]

    @property
    def text(self) -> str:
        """The text blocks joined."""
        return "".join(block.get("text", "") for block in self.content if block.get("type") == "text")


class TurnClient(Protocol):
    """Asks the model for the next assistant turn."""

    def complete(
        self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> ModelTurn:
        """The model's reply to ``messages`` (Anthropic form) with ``tools`` offered."""


class _SDKTurnClient(ABC, Generic[_SDK]):
    """What both clients share: the model name and an SDK client that sends the run's session header."""

    def __init__(
        self, model: str, base_url: str, api_key: str, *, session: str | None = None, max_retries: int = 2,
        timeout: float = 120.0,
    ) -> None:
        headers = {SESSION_HEADER: session} if session else None
        self.model = model
        self.client: _SDK = self._connect(
            base_url=base_url, api_key=api_key, default_headers=headers, max_retries=max_retries, timeout=timeout
        )

    def complete(
        self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> ModelTurn:
        """One call of the SDK's create method (``tools`` are sent only when there are any)."""
        request = {"model": self.model, "max_tokens": max_tokens, **self._conversation(system, messages)}
        if tools:
            request["tools"] = self._tools(tools)
        return self._create(request)

    @abstractmethod
    def _connect(self, **options: Any) -> _SDK:
        """The SDK client made with ``options`` (the SDK is imported here, only when a client is made)."""

    @abstractmethod
    def _conversation(self, system: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The system prompt and the messages (Anthropic form) as the create method's arguments."""

    def _tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Tool definitions (Anthropic form) as the create method takes them: as they are."""
        return tools

    @abstractmethod
    def _create(self, request: dict[str, Any]) -> ModelTurn:
        """The turn one call of the SDK's create method with ``request`` answers."""


class AnthropicTurnClient(_SDKTurnClient["anthropic.Anthropic"]):
    """The anthropic SDK's ``messages.create``."""

    def _connect(self, **options: Any) -> anthropic.Anthropic:
        import anthropic

        return anthropic.Anthropic(**options)

    def _conversation(self, system: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"system": system, "messages": messages}

    def _create(self, request: dict[str, Any]) -> ModelTurn:
        message = self.client.messages.create(**request)
        content = [block.model_dump(mode="json", exclude_none=True) for block in message.content]
        usage = message.usage
        return ModelTurn(
            content, message.stop_reason, usage.input_tokens or 0, usage.output_tokens or 0,
            message.model_dump(mode="json"),
        )


class OpenAITurnClient(_SDKTurnClient["openai.OpenAI"]):
    """The openai SDK's ``chat.completions.create`` (for OpenAI-compatible servers too)."""

    def _connect(self, **options: Any) -> openai.OpenAI:
        import openai

        return openai.OpenAI(**options)

    def _conversation(self, system: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"messages": openai_messages(system, messages)}

    def _tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return openai_tools(tools)

    def _create(self, request: dict[str, Any]) -> ModelTurn:
        raw = self.client.chat.completions.create(**request).model_dump(mode="json")
        choice = raw["choices"][0] if raw.get("choices") else {"message": {}, "finish_reason": None}
        usage = raw.get("usage") or {}
        return ModelTurn(
            anthropic_blocks(choice.get("message") or {}),
            openai_provider.canonical_stop_reason(raw),
            usage.get("prompt_tokens") or 0,
            usage.get("completion_tokens") or 0,
            raw,
        )


# --------------------------------------------------------------------------- Anthropic <-> OpenAI shapes


def openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic tool definitions as OpenAI function tools."""
    return [
        {"type": "function", "function": {"name": tool["name"], "description": tool.get("description", ""),
                                          "parameters": tool.get("input_schema") or {"type": "object"}}}
        for tool in tools
    ]


def openai_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An Anthropic conversation as Chat Completions messages (tool results become ``tool`` messages)."""
    converted: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant":
            converted.append(_assistant_message(content))
            continue
        if isinstance(content, str):
            converted.append({"role": "user", "content": content})
            continue
        parts: list[dict[str, Any]] = []
        for block in content or []:
            kind = block.get("type")
            if kind == "tool_result":
                converted.append({"role": "tool", "tool_call_id": block.get("tool_use_id"),
                                  "content": _result_text(block.get("content"))})
            elif kind == "text":
                parts.append({"type": "text", "text": block.get("text", "")})
            elif kind == "image":
                parts.append({"type": "image_url", "image_url": {"url": _image_url(block.get("source") or {})}})
        if parts:
            converted.append({"role": "user", "content": parts})
    return converted


def anthropic_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A Chat Completions assistant message as the Anthropic text and tool_use blocks the agent loop sends
    back (the provider's conversion; arguments that are not a JSON object become ``{}``)."""
    blocks = []
    for block in openai_provider.assistant_blocks(message):
        if block["type"] == "tool_use":
            arguments = block.get("input")
            block = {"type": "tool_use", "id": block.get("id"), "name": block.get("name"),
                     "input": arguments if isinstance(arguments, dict) else {}}
        elif block["type"] != "text":
            continue
        blocks.append(block)
    return blocks


def _assistant_message(content: Any) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    text = "".join(block.get("text", "") for block in content or [] if block.get("type") == "text")
    calls = [
        {"id": block.get("id"), "type": "function",
         "function": {"name": block.get("name"), "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False)}}
        for block in content or [] if block.get("type") == "tool_use"
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def _image_url(source: dict[str, Any]) -> str:
    if source.get("type") == "url":
        return str(source.get("url", ""))
    return f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
