"""How judge requests travel: the anthropic SDK against the tracekit proxy, replaying or recording.

The verdict store (``recordings/judge/`` by default) is a folder of ordinary trace files, one per judge
exchange, written by the proxy's recorder (redacted) and read by its replay index: a kept answer is found
by the canonical request key, exactly as ``tracekit replay`` would find it (``tracekit replay
recordings/judge`` serves the same answers to any client).

- A request whose answers are kept goes to a proxy in replay mode over the store: no network.
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
from pathlib import Path
from typing import Any

import orjson

from tracekit.clients import ApiModelClient, Endpoint, ModelClient, ModelUse
from tracekit.constants import JUDGE_SOURCE, SESSION_HEADER
from tracekit.errors import JudgeCallError
from tracekit.proxy import ProxyConfig, ReplayIndex, RunningProxy
from tracekit.redact import default_redactor
from tracekit.trace import ModelCall, iter_records, trace_files

log = logging.getLogger(__name__)

#: API version sent with sampling parameters: the SDK's default version (2026-10-21) no longer accepts
#: ``temperature`` (Anthropic SDK 2.x migration notes); 2023-06-01 still does, for models that support it.
SAMPLING_API_VERSION = "2023-06-01"


class JudgeTransport:
    """Sends judge requests through a replaying or a recording proxy (see the module docstring).

    Example::

        with JudgeTransport(Path("recordings/judge"), upstream=None, offline=True) as transport:
            if transport.kept(key) >= 1:
                response = transport.send(body, session="judge-CASE-01-abc-s0", case_id="CASE-01", kept=True)
    """

    def __init__(
        self,
        store: Path,
        *,
        upstream: str | None = None,
        offline: bool = False,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        client: ModelClient | None = None,
    ) -> None:
        self.store = Path(store)
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
        self._replay: RunningProxy | None = None
        self.kept_files: list[Path] = []
        """Files this transport added to the store."""

    # -- what is kept ------------------------------------------------------------------------------------

    @property
    def index(self) -> ReplayIndex:
        """The store's answers by request key (loaded once)."""
        if self._index is None:
            self._index = ReplayIndex.load(self.store) if self.store.is_dir() else ReplayIndex()
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

    # -- sending ---------------------------------------------------------------------------------------------

    def send(
        self, body: dict[str, Any], *, session: str, case_id: str, kept: bool, meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Send ``body`` through the replaying proxy (``kept``) or a recording one; the response JSON.

        A recorded exchange is kept with ``case_id`` and ``meta`` in its header's ``meta.judge``.

        Raises ``JudgeCallError`` when no answer came (offline and not kept, API error, transport failure).
        """
        if kept:
            with self._lock:
                proxy = self._replay_proxy()
            response = self._ask(proxy.url, body, session)
            with self._lock:
                self.replayed += 1
            return response
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

    def _replay_proxy(self) -> RunningProxy:
        if self._replay is None:
            running = RunningProxy(ProxyConfig(mode="replay", replay_dir=self.store, on_miss="error"))
            running.proxy.index = self.index  # one index, so that counts and answers agree
            self._replay = running.start()
        return self._replay

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
            folder = self.store / _safe(case_id)
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / path.name
            number = 1
            while target.exists():
                number += 1
                target = folder / f"{path.stem}-{number}.jsonl"
            _label_header(path, case_id, meta)
            shutil.move(str(path), target)
            self.kept_files.append(target)

    # -- closing ---------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the replaying proxy and close the judge model's endpoint (new answers are already in the store)."""
        if self._replay is not None:
            self._replay.close()
            self._replay = None
        if self._endpoint is not None:
            self._endpoint.close()
            self._endpoint = None

    def __enter__(self) -> JudgeTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


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
