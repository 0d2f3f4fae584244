"""How judge requests travel: kept answers read from the store, new ones through a recording tracekit proxy.

The verdict store (``recordings/judge/`` by default) is a folder of ordinary trace files, one per judge
exchange, written by the proxy's recorder (redacted) and read by its replay index: a kept answer is found
by the canonical request key, exactly as ``tracekit replay`` would find it (``tracekit replay
recordings/judge`` serves the same answers to any client).

- A request whose answers are kept is answered from the store's replay index directly (the answer a proxy
  in replay mode would serve, in the same order): no client, no proxy, no HTTP, so re-analysis costs
  nothing.
- A new request (never offline) goes to a proxy in record mode in front of the judge model's endpoint
  (``tracekit.clients``: the judge's API, or whatever the model's registered client opens), started for
  that one request (tens of milliseconds, against seconds for the judge's answer). It records into a
  scratch folder; once it has stopped, an exchange that produced an answer (HTTP 200) moves into the store
  under ``<store>/<case id>/`` at once, so a verdict is kept even if the process is killed later. A failed
  exchange is dropped, so that a transient API error is retried next time instead of replayed forever.

Each request is its own session, named ``judge-<case>-<key>-s<sample>`` with the ``x-tracekit-session``
header (never forwarded upstream), which is also the kept file's name.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import orjson

from tracekit.clients import ApiModelClient, Endpoint, ModelClient, ModelUse
from tracekit.constants import JUDGE_SOURCE, SESSION_HEADER
from tracekit.errors import JudgeCallError
from tracekit.judge.prompt import ROUTE
from tracekit.proxy import ProxyConfig, ReplayIndex, RunningProxy, request_key
from tracekit.redact import default_redactor
from tracekit.storage import atomic_upload, is_url, iter_files, join, kind, local, read_bytes
from tracekit.trace import ModelCall, iter_records, trace_files
from tracekit.trace.io import TRACE_SUFFIX

log = logging.getLogger(__name__)

#: API version sent with sampling parameters: the SDK's default version (2026-10-21) no longer accepts
#: ``temperature`` (Anthropic SDK 2.x migration notes); 2023-06-01 still does, for models that support it.
SAMPLING_API_VERSION = "2023-06-01"


class JudgeTransport(AbstractContextManager["JudgeTransport"]):
    """Answers judge requests from the store, or sends them through a recording proxy (see the module docstring).

    Example::

        with JudgeTransport(Path("recordings/judge"), upstream=None, offline=True) as transport:
            if transport.kept(key) >= 1:
                response = transport.send(body, session="judge-CASE-01-abc-s0", case_id="CASE-01", kept=True)
    """

    def __init__(
        self,
        store: str | Path,
        *,
        upstream: str | None = None,
        offline: bool = False,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        client: ModelClient | None = None,
    ) -> None:
        self.store: str | Path = store if is_url(local(store)) else Path(local(store))
        """The store: a folder, or a URL (``tracekit.storage``) read and written through its filesystem."""
        self.offline = offline
        self.client = client or ApiModelClient()
        """The judge model's client: it opens the endpoint new requests go to (a model API by default)."""
        self.upstream = upstream or os.environ.get("ANTHROPIC_BASE_URL")
        """The judge API the person named, if any (the client decides what to make of it)."""
        self.api_key = api_key or self.client.api_key or os.environ.get("ANTHROPIC_API_KEY")
        self.timeout = timeout
        self.max_retries = max_retries
        self._endpoint: Endpoint | None = None
        self.calls = 0
        """Requests sent upstream (recorded) in this run."""
        self.replayed = 0
        """Requests answered from the store in this run."""
        self._lock = threading.Lock()
        self._index: ReplayIndex | None = None
        self._models: list[str] | None = None
        self.kept_files: list[str | Path] = []
        """Files this transport added to the store."""

    # -- what is kept ------------------------------------------------------------------------------------

    @property
    def index(self) -> ReplayIndex:
        """The store's answers by request key (loaded once)."""
        if self._index is None:
            self._index = _load_index(self.store)
        return self._index

    def kept(self, key: str) -> int:
        """How many usable answers (HTTP 200) the store holds for ``key``."""
        return sum(1 for answer in self.index.answers.get(key, []) if answer.status < 400)

    def kept_requests(self) -> list[dict[str, Any]]:
        """The request bodies of every kept answer (one per key)."""
        bodies = []
        for answers in self.index.answers.values():
            request = next((a.request for a in answers if isinstance(a.request, dict) and a.status < 400), None)
            if request is not None:
                bodies.append(request)
        return bodies

    def kept_models(self) -> list[str]:
        """The judge models of the kept answers, sorted (read once: the index is loaded once too)."""
        if self._models is None:
            self._models = sorted({str(body["model"]) for body in self.kept_requests() if body.get("model")})
        return self._models

    # -- sending ---------------------------------------------------------------------------------------------

    def send(
        self, body: dict[str, Any], *, session: str, case_id: str, kept: bool, meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The kept answer to ``body`` (``kept``), or ``body`` sent through a recording proxy; the response JSON.

        A recorded exchange is kept with ``case_id`` and ``meta`` in its header's ``meta.judge``.

        Raises ``JudgeCallError`` when no answer came (offline and not kept, API error, transport failure).
        """
        if kept:
            return self._kept_answer(body)
        if self.offline:
            raise JudgeCallError("offline: no kept answer for this request")
        upstream = self._open_endpoint()
        scratch = Path(tempfile.mkdtemp(prefix="tracekit-judge-"))
        try:
            with RunningProxy(ProxyConfig(mode="record", upstream=upstream, out_dir=scratch)) as proxy:
                with self._lock:
                    self.calls += 1
                response = self._ask(proxy.url, body, session)
            self._keep_recorded(scratch, case_id, meta or {})
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return response

    def _kept_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The next kept answer to ``body``, read from the store's index: what a replaying proxy would serve
        (the same FIFO over the key's answers, the same JSON), without a client, a proxy or a socket."""
        key = request_key(ROUTE, body)
        with self._lock:
            # A kept file may hold a failed attempt before its answer (the client retried): skip to an answer,
            # as the client did; ``kept`` counts only those.
            answer = None
            for _ in range(len(self.index.answers.get(key, ()))):
                answer = self.index.lookup(key)
                if answer is not None and answer.status < 400:
                    self.replayed += 1
                    break
        if answer is None:
            raise JudgeCallError("no kept answer for this request")
        if answer.status >= 400:
            raise JudgeCallError(f"the judge API answered {answer.status}: {_error_message(answer.response)}")
        response = answer.response
        if response is None:
            raise JudgeCallError(f"the kept answer ({answer.where}) has no JSON body")
        return response

    def _ask(self, url: str, body: dict[str, Any], session: str) -> dict[str, Any]:
        import anthropic

        client = anthropic.Anthropic(
            base_url=url, api_key=self.api_key or "tracekit-replay", max_retries=self.max_retries, timeout=self.timeout
        )
        arguments = dict(body)
        headers = {SESSION_HEADER: session}
        extra_body: dict[str, Any] = {}
        if "temperature" in arguments:
            extra_body["temperature"] = arguments.pop("temperature")
            headers["anthropic-version"] = SAMPLING_API_VERSION
        arguments["extra_headers"] = headers
        if extra_body:
            arguments["extra_body"] = extra_body
        try:
            raw = client.messages.with_raw_response.create(**arguments)
        except anthropic.APIStatusError as exc:
            raise JudgeCallError(f"the judge API answered {exc.status_code}: {_error_message(exc.body)}") from exc
        except anthropic.APIError as exc:
            raise JudgeCallError(f"the judge API could not be reached: {exc}") from exc
        finally:
            client.close()
        response: dict[str, Any] = raw.http_response.json()
        return response

    def _open_endpoint(self) -> str:
        """The judge model's endpoint, opened at the first new request and kept until ``close``."""
        with self._lock:
            if self._endpoint is None:
                self._endpoint = self.client.open(ModelUse("judge", base_url=self.upstream))
            return self._endpoint.url

    def _keep_recorded(self, scratch: Path, case_id: str, meta: dict[str, Any]) -> None:
        for path in trace_files([scratch]):
            problems: list[Any] = []
            answered = any(
                isinstance(record, ModelCall) and record.status == 200 and record.response is not None
                for record in iter_records(path, problems)
            )
            if not answered:
                log.info("tracekit judge: dropped %s (no answer)", path.name)
                continue
            _label_header(path, case_id, meta)
            if isinstance(self.store, str):  # a URL: uploaded as one object
                self.kept_files.append(_upload(path, join(self.store, _safe(case_id))))
                continue
            folder = self.store / _safe(case_id)
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / path.name
            number = 1
            while target.exists():
                number += 1
                target = folder / f"{path.stem}-{number}.jsonl"
            shutil.move(str(path), target)
            self.kept_files.append(target)

    # -- closing ---------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the judge model's endpoint (new answers are already in the store)."""
        if self._endpoint is not None:
            self._endpoint.close()
            self._endpoint = None

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _load_index(store: str | Path) -> ReplayIndex:
    """The replay index of a store; a URL's files are copied to a scratch folder first, under the same
    relative names, so that the index (and the order of a key's answers) is the one a local copy gives."""
    if not isinstance(store, str):
        return ReplayIndex.load(store) if store.is_dir() else ReplayIndex()
    if kind(store) != "directory":
        return ReplayIndex()
    prefix = store.rstrip("/") + "/"
    with tempfile.TemporaryDirectory(prefix="tracekit-judge-store-") as scratch:
        for url in iter_files(store, TRACE_SUFFIX):
            target = Path(scratch, *url.removeprefix(prefix).split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(read_bytes(url))
        return ReplayIndex.load(scratch)


def _upload(path: Path, folder: str) -> str:
    """Upload a kept exchange into the URL ``folder`` under a name not taken yet; the object's URL."""
    target = join(folder, path.name)
    number = 1
    while kind(target) is not None:
        number += 1
        target = join(folder, f"{path.stem}-{number}{TRACE_SUFFIX}")
    with atomic_upload(target) as out:
        out.write(path.read_bytes())
    return target


def _label_header(path: Path, case_id: str, meta: dict[str, Any]) -> None:
    """Mark a recorded exchange as the judge's (header ``source: judge``, ``meta.judge``: case, template,
    evidence hash, sample). The header's ``case_id`` stays empty: this is not a run of the case."""
    lines = path.read_bytes().split(b"\n", 1)
    header = orjson.loads(lines[0])
    header["source"] = JUDGE_SOURCE
    header.setdefault("meta", {})["judge"] = {"case_id": case_id, **meta}
    first = default_redactor().redact_bytes(orjson.dumps(header))
    path.write_bytes(first + b"\n" + (lines[1] if len(lines) > 1 else b""))


def _error_message(body: object) -> str:
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(body)[:300]


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name) or "unbound"
