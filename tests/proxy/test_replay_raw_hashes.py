"""The nearest-recording hashes a replay load makes from a request's JSON bytes (``RawHashes``) are the ones
``request_hashes`` makes from the parsed body, whatever the JSON's spacing, escapes and key order, for
sessions whose requests extend the one before and for requests that change anything else."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import orjson

from tracekit.providers import PROVIDERS
from tracekit.proxy.nearest import request_hashes
from tracekit.proxy.raw_hashes import RawHashes

WORDS = ["北京", "上海", "晴", "雨", 'say "hi"\n', "\u2028"]

STYLES: list[Callable[[Any], bytes]] = [
    orjson.dumps,
    lambda body: json.dumps(body).encode(),  # ", " and ": ", non-ASCII escaped
    lambda body: json.dumps(body, ensure_ascii=False, indent=1).encode(),  # newlines before every comma
    lambda body: json.dumps(body, ensure_ascii=False, separators=(" ,", ":"), sort_keys=True).encode(),
]


def _item(rng: random.Random, number: int) -> Any:
    roles = ("user", "assistant")
    choice = rng.random()
    if choice < 0.1:
        return rng.choice([None, 3, "文字", [1, {"a": 2}]])  # items need not be objects
    content: Any = rng.choice(WORDS)
    if choice < 0.4:
        content = [{"type": "text", "text": rng.choice(WORDS)}, {"type": "tool_result", "content": [1.5, True]}]
    item = {"role": roles[number % 2], "content": content}
    return dict(reversed(list(item.items()))) if rng.random() < 0.3 else item  # the same item, keys reordered


def _session(rng: random.Random, provider: str) -> list[Any]:
    """A session's request bodies: each extends the one before, and now and then changes something else."""
    items_field = "input" if provider == "openai_responses" else "messages"
    body: dict[str, Any] = {"model": rng.choice(["m1", "m2", None, 7])}
    for name, values in (("max_tokens", [10, 20]), ("temperature", [0.5, 1e-7]), ("system", WORDS),
                         ("tools", [[{"name": "t", "input_schema": {"type": "object"}}], []]),
                         ("stream", [True, False]), ("stream_options", [{"include_usage": True}]),
                         ("metadata", [{"user_id": "u1"}, {"user_id": "u2", "k": 1}, {"k": [1]}, "m"])):  # fmt: skip
        if rng.random() < 0.5:
            body[name] = rng.choice(values)
    items: list[Any] = []
    bodies: list[Any] = []
    for _ in range(rng.randint(1, 8)):
        items = [*items, *(_item(rng, len(items) + n) for n in range(rng.randint(0, 3)))]
        body = {**body, items_field: items}
        if provider == "openai_responses" and rng.random() < 0.15:
            body = {**body, "input": rng.choice(WORDS)}  # a string input is one user message
        if rng.random() < 0.1:
            body = {**body, items_field: rng.choice([None, 3.5, {"not": "a list"}])}
        if rng.random() < 0.2:
            name = rng.choice(["max_tokens", "stream", "metadata", "model", "extra"])
            body = {**body, name: rng.choice([1, True, {"user_id": "u3"}, "m3"])}
        if rng.random() < 0.1:
            body = {key: value for key, value in body.items() if key != "model"}
        bodies.append(body)
    return bodies


def test_hashes_from_json_bytes_are_the_hashes_of_the_parsed_body() -> None:
    rng = random.Random(7)
    hashing = RawHashes()  # one for the whole load, as a replay load uses it
    checked = 0
    for _ in range(400):
        name = rng.choice(list(PROVIDERS))
        provider = PROVIDERS[name]
        style = rng.choice(STYLES)
        for body in _session(rng, name if rng.random() < 0.9 else "openai_responses"):
            data = style(body)
            assert hashing.request(provider, data) == request_hashes(provider, body), data
            checked += 1
    assert checked > 1500


def test_a_request_that_is_not_an_object_is_hashed_as_the_models_reader_hashes_it() -> None:
    hashing = RawHashes()
    provider = PROVIDERS["anthropic"]
    for body in ([1, 2], "text", 3, None):
        assert hashing.request(provider, orjson.dumps(body)) == request_hashes(provider, body)
