"""Replay serves at once and loads its recordings in the background (``tracekit.proxy.loading``): a request that
arrives during the load waits for it and gets the recorded answer, never a miss; health says ``loading`` until
then; a load that fails answers the waiting requests with a 503 that says why, and stops the command.

The build is held on an event until the proxy reports a request waiting (``first_wait``), so each test sees
the early request for certain, whatever the machine's speed."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import orjson

from tracekit.errors import ProxySetupError
from tracekit.loop_thread import LoopThread
from tracekit.proxy import LoadingProxy, Proxy, ProxyConfig
from tracekit.proxy.runner import start, stop
from tracekit.redact import Redactor
from tracekit.testing import text_reply

from .helpers import recording
from .test_cli import HELLO

WAIT = 30  # seconds: only a broken proxy takes that long


def record_hello(out: Path) -> None:
    with recording([text_reply("你好！")], out) as (_, proxy):
        anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0).messages.create(
            model="m", max_tokens=10, messages=HELLO
        )


@contextmanager
def serving(loading: LoadingProxy) -> Iterator[str]:
    thread = LoopThread("test-loading")
    runner, url = thread.run(start(loading, "127.0.0.1", 0), timeout=WAIT)
    try:
        yield url
    finally:
        thread.stop(stop(loading, runner), timeout=WAIT)


def health(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/_tracekit/health", timeout=WAIT) as answer:
        assert answer.status == 200
        return orjson.loads(answer.read())  # type: ignore[no-any-return]


def held(build: Callable[[], Proxy]) -> tuple[Callable[[], Proxy], threading.Event]:
    """``build``, run only once the returned event is set."""
    release = threading.Event()

    def run() -> Proxy:
        assert release.wait(WAIT)
        return build()

    return run, release


def test_an_early_request_waits_for_the_load_and_gets_the_recorded_answer(tmp_path: Path) -> None:
    record_hello(tmp_path)
    config = ProxyConfig(mode="replay", replay_dir=tmp_path, redactor=Redactor())
    loaded: list[Proxy] = []
    build, release = held(lambda: Proxy(config))
    loading = LoadingProxy(config, build, ready=loaded.append)
    with serving(loading) as url:
        assert health(url) == {"status": "loading"}
        answers: list[Any] = []
        client = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, timeout=WAIT)
        asking = threading.Thread(target=lambda: answers.append(
            client.messages.with_raw_response.create(model="m", max_tokens=10, messages=HELLO)))  # fmt: skip
        asking.start()
        assert loading.first_wait.wait(WAIT), "the request did not reach the proxy"
        assert not answers and loading.loading, "answered before the recordings were loaded"
        release.set()
        asking.join(WAIT)
        assert len(answers) == 1
        raw = answers[0]
        assert raw.headers["x-tracekit-replay"] == "hit"
        assert raw.parse().content[0].text == "你好！"
        assert health(url) == {"status": "ok"}
        assert loading.waited == 1 and loaded == [loading.proxy]
        assert loading.proxy is not None and dict(loading.proxy.matches) == {"exact": 1}


def test_a_failed_load_answers_the_waiting_request_with_503_and_says_why(tmp_path: Path) -> None:
    config = ProxyConfig(mode="replay", replay_dir=tmp_path, redactor=Redactor())

    def fail() -> Proxy:
        raise ProxySetupError("cannot read the recordings")

    build, release = held(fail)
    failed = threading.Event()
    loading = LoadingProxy(config, build, failed=failed.set)
    with serving(loading) as url:
        statuses: list[tuple[int, bytes]] = []

        def ask() -> None:
            request = urllib.request.Request(url + "/v1/messages", data=b"{}", method="POST")
            try:
                urllib.request.urlopen(request, timeout=WAIT)
            except urllib.error.HTTPError as error:
                statuses.append((error.code, error.read()))

        asking = threading.Thread(target=ask)
        asking.start()
        assert loading.first_wait.wait(WAIT)
        release.set()
        asking.join(WAIT)
        assert failed.wait(WAIT)
        assert isinstance(loading.failure, ProxySetupError) and loading.proxy is None
        [(status, body)] = statuses
        assert status == 503 and b"cannot read the recordings" in body
