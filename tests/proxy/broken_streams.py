"""Reading a stream until it breaks, and saying so whatever exception the SDK uses for a break.

Which exception a cut stream surfaces as is the SDK's choice and changes between versions: anthropic
before 2.17 let the transport's ``httpx2.RemoteProtocolError`` through, 2.17 wraps it in
``anthropic.APIConnectionError``. The tests assert what the client saw instead: the text that came
before the break, and that the stream ended in an error that was not an answer from the server (an
error status or an in-stream ``error`` event is an ``APIStatusError``, and is re-raised here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anthropic


@dataclass
class BrokenStream:
    """What a client read from a stream that broke: its text so far and the error that ended it."""

    text: str
    error: Exception


def read_until_it_breaks(client: anthropic.Anthropic, **request: Any) -> BrokenStream:
    """Stream ``request`` through ``client`` and return what came before the break.

    Fails the test when the stream ends normally; lets an ``APIStatusError`` through, since the
    server answering with an error is not a broken stream.
    """
    received: list[str] = []
    try:
        with client.messages.stream(**request) as stream:
            for text in stream.text_stream:
                received.append(text)
            stream.get_final_message()
    except anthropic.APIStatusError:
        raise
    except Exception as error:  # the class varies by SDK version: see the module docstring
        return BrokenStream("".join(received), error)
    raise AssertionError(f"the stream ended normally after {''.join(received)!r}; it should have broken")
