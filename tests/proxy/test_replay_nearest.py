"""The nearest recording of a replay miss, found through the index by route, model and prefix: the same
recording and the same difference as comparing the request against every recording (the way it was done
before the index, kept here as the reference), on recordings made to collide on every part of the score."""

from __future__ import annotations

import random
from typing import Any

import orjson

from tracekit.providers import PROVIDERS
from tracekit.providers.base import Provider
from tracekit.proxy import RecordedAnswer, ReplayIndex
from tracekit.proxy.keys import first_difference, normalized_request, request_key


def _answer(where: str, provider: str, request: Any) -> RecordedAnswer:
    request_json = None if request is None else orjson.dumps(request)
    return RecordedAnswer(where=where, provider=PROVIDERS[provider], request_json=request_json, status=200,
                          response_json=b"{}",
                          sse=None, offsets_ms=None, latency_ms=None, ttft_ms=None, partial=False, transport=None,
                          headers={})  # fmt: skip


def _likeness(provider: Provider, recorded: Any, live: Any) -> tuple[int, int, int]:
    """The score before the index: same model, shared leading messages, equal top-level fields."""
    if not isinstance(recorded, dict) or not isinstance(live, dict):
        return (0, 0, 0)
    same_model = int(recorded.get("model") == live.get("model"))
    shared = 0
    for old, new in zip(provider.request_items(recorded) or [], provider.request_items(live) or [], strict=False):
        if old != new:
            break
        shared += 1
    return (same_model, shared, sum(1 for key, value in live.items() if recorded.get(key) == value))


def _every_recording(index: ReplayIndex, route: str, body: Any) -> tuple[RecordedAnswer, str] | None:
    """The nearest recording by comparing ``body`` with every one (first of equal scores wins)."""
    best: tuple[tuple[int, int, int], RecordedAnswer] | None = None
    for answers in index.answers.values():
        answer = next((a for a in answers if a.request is not None), None)
        if answer is None or route != answer.provider.ROUTE:
            continue
        score = _likeness(answer.provider, normalized_request(answer.request), normalized_request(body))
        if best is None or score > best[0]:
            best = (score, answer)
    return None if best is None else (best[1], first_difference(best[1].request, body))


WORDS = ["北京", "上海", "晴", "雨"]


def _request(rng: random.Random, provider: str) -> Any:
    """A request drawn from few choices, so that recordings share models, prefixes and fields."""
    if rng.random() < 0.03:
        return {"model": "m1", "messages": rng.choice([3.5, None, "文字"])}  # not a list: no items
    items_field = "input" if provider == "openai_responses" else "messages"
    roles = ("user", "assistant")
    items: Any = [{"role": roles[n % 2], "content": rng.choice(WORDS)} for n in range(rng.randint(0, 4))]
    if provider == "openai_responses" and rng.random() < 0.2:
        items = rng.choice(WORDS)  # a string input is one user message
    body: dict[str, Any] = {"model": rng.choice(["m1", "m2", None]), items_field: items}
    for name, values in (("max_tokens", [10, 20]), ("temperature", [None, 0.5]), ("system", ["你好", "助手"]),
                         ("stream", [True, False]), ("metadata", [{"user_id": "u1"}, {"user_id": "u2", "k": 1}])):
        if rng.random() < 0.5:
            body[name] = rng.choice(values)
    if body["model"] is None and rng.random() < 0.5:
        del body["model"]
    return body


def test_the_index_names_the_same_nearest_recording_and_difference_as_comparing_every_one() -> None:
    rng = random.Random(20)
    index = ReplayIndex()
    providers = list(PROVIDERS)
    recordings = [(provider, _request(rng, provider)) for provider in rng.choices(providers, k=600)]
    keys = [request_key(PROVIDERS[provider].ROUTE, request) for provider, request in recordings]
    for number, key in enumerate(keys):  # failed attempts first: their keys come before the requests of others
        if rng.random() < 0.1:
            index.add(key, _answer(f"attempt {number}", recordings[number][0], None))
    for number, ((provider, request), key) in enumerate(zip(recordings, keys, strict=True)):
        index.add(key, _answer(f"call {number}", provider, request))
    compared = 0
    for _ in range(1500):
        provider = rng.choice(providers)
        route = PROVIDERS[provider].ROUTE
        body = _request(rng, provider) if rng.random() < 0.95 else rng.choice([[1, 2], "text", None])
        expected = _every_recording(index, route, body)
        found = index.nearest(route, body)
        assert (found and (found[0].where, found[1])) == (expected and (expected[0].where, expected[1])), body
        compared += found is not None
    assert compared > 1000


def test_a_route_with_no_recording_has_no_nearest() -> None:
    index = ReplayIndex()
    index.add("k", _answer("call 0", "anthropic", {"model": "m", "messages": []}))
    assert index.nearest(PROVIDERS["openai"].ROUTE, {"model": "m", "messages": []}) is None
    assert index.nearest(PROVIDERS["anthropic"].ROUTE, [1]) is not None


def test_a_miss_names_the_recording_sharing_the_most_messages_among_thousands() -> None:
    index = ReplayIndex()
    for session in range(3000):
        messages = [{"role": "user", "content": f"问题 {session}"}, {"role": "assistant", "content": "好"},
                    {"role": "user", "content": "继续"}]  # fmt: skip
        index.add(f"k{session}", _answer(f"session {session}", "anthropic", {"model": f"m{session % 3}",
                                                                            "messages": messages}))  # fmt: skip
    live = {"model": "m1", "messages": [{"role": "user", "content": "问题 1234"},
                                        {"role": "assistant", "content": "好"},
                                        {"role": "user", "content": "停下"}]}  # fmt: skip
    found = index.nearest("/v1/messages", live)
    assert found is not None
    assert found[0].where == "session 1234"
    assert found[1] == "root['messages'][2]['content']: recorded '继续' != request '停下'"
