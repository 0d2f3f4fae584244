"""Scripts: what the fake upstream answers to each request.

A script is a list of replies consumed in arrival order (one list for all routes, or one per provider),
or a function of the request. A plain string stands for ``text_reply(string)``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence

from tracekit._fake.replies import ConnectionReset, ErrorReply, MessageReply, Reply, error_reply, text_reply
from tracekit._fake.request import FakeRequest, Provider

ReplyLike = Reply | str
ScriptFunction = Callable[[FakeRequest], ReplyLike]

PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "openai_responses", "gemini")


class Script:
    """Replies for the fake upstream.

    ``Script([r1, r2])`` answers every route in order; ``Script(anthropic=[...], openai=[...],
    openai_responses=[...], gemini=[...])`` keeps one queue per provider (a provider without its own queue takes
    from the shared one); ``Script(function=f)`` asks ``f(request)`` each time. A request that finds no reply
    left gets a 500 ``api_error`` with ``x-should-retry: false`` that says so, and is counted in ``exhausted``.
    """

    def __init__(
        self,
        replies: Sequence[ReplyLike] = (),
        *,
        anthropic: Sequence[ReplyLike] | None = None,
        openai: Sequence[ReplyLike] | None = None,
        function: ScriptFunction | None = None,
        openai_responses: Sequence[ReplyLike] | None = None,
        gemini: Sequence[ReplyLike] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._shared: deque[ReplyLike] = deque(replies)
        self._by_provider: dict[str, deque[ReplyLike]] = {}
        queues = (("anthropic", anthropic), ("openai", openai), ("openai_responses", openai_responses),
                  ("gemini", gemini))  # fmt: skip
        for provider, queue in queues:
            if queue is not None:
                self._by_provider[provider] = deque(queue)
        self._function = function
        self.served = 0
        self.exhausted = 0

    @classmethod
    def of(cls, value: ScriptLike) -> Script:
        """A Script from a Script, a function, a list of replies, or a mapping of provider -> list."""
        if isinstance(value, Script):
            return value
        if isinstance(value, MessageReply | ErrorReply | ConnectionReset):
            return cls([value])
        if callable(value):
            return cls(function=value)
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - {"replies", *PROVIDERS})
            if unknown:
                expected = ", ".join(f"'{key}'" for key in ("replies", *PROVIDERS))
                raise ValueError(f"unknown script keys {unknown}; expected {expected}")
            return cls(value.get("replies", ()), anthropic=value.get("anthropic"), openai=value.get("openai"),
                       openai_responses=value.get("openai_responses"), gemini=value.get("gemini"))
        if isinstance(value, str):
            raise TypeError("a script is a list of replies, not one string; wrap it in a list")
        return cls(value)

    def add(self, *replies: ReplyLike, provider: Provider | None = None) -> None:
        """Append replies (to one provider's queue, or to the shared one) while the server runs."""
        with self._lock:
            queue = self._by_provider.setdefault(provider, deque()) if provider else self._shared
            queue.extend(replies)

    @property
    def remaining(self) -> int:
        """How many scripted replies are not used yet (0 for a function script)."""
        with self._lock:
            return len(self._shared) + sum(len(queue) for queue in self._by_provider.values())

    def next_reply(self, request: FakeRequest) -> Reply:
        """The reply to ``request``: the next in its queue, or the function's answer."""
        if self._function is not None:
            return self._count(as_reply(self._function(request)))
        with self._lock:
            queue = self._by_provider.get(request.provider or "")
            if not queue:
                queue = self._shared
            if queue:
                return self._count(as_reply(queue.popleft()))
            self.exhausted += 1
        return error_reply(
            500,
            "api_error",
            f"tracekit fake upstream: the script has no reply left for request #{request.index} "
            f"({request.method} {request.path}) after {self.served} replies",
            should_retry=False,
        )

    def _count(self, reply: Reply) -> Reply:
        self.served += 1
        return reply


#: Anything ``FakeUpstream`` and ``Script.of`` accept as a script.
ScriptLike = Script | Reply | ScriptFunction | Sequence[ReplyLike] | Mapping[str, Sequence[ReplyLike]]


def as_reply(value: ReplyLike) -> Reply:
    """``value`` as a Reply; a string becomes a text reply."""
    if isinstance(value, str):
        return text_reply(value)
    if isinstance(value, MessageReply | ErrorReply | ConnectionReset):
        return value
    raise TypeError(f"a script reply must be a Reply or a string, got {type(value).__name__}")


def by_turn(replies: Sequence[ReplyLike]) -> ScriptFunction:
    """A script function answering ``replies[k]`` where k is the number of assistant messages already in
    the request's conversation: each conversation gets the same sequence whatever the interleaving of
    concurrent sessions, and an SDK retry gets the same reply again."""
    fixed = [as_reply(reply) for reply in replies]

    def answer(request: FakeRequest) -> Reply:
        turn = request.assistant_turns
        if turn < len(fixed):
            return fixed[turn]
        return error_reply(
            500,
            "api_error",
            f"tracekit fake upstream: by_turn has {len(fixed)} replies, the conversation is at turn {turn}",
            should_retry=False,
        )

    return answer
