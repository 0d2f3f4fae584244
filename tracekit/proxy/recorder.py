"""Writing each session's trace as its exchanges finish: one JSONL file per session.

Records are derived by the trace's ``TraceBuilder`` (each request re-sends the history; only what is new
is recorded) and appended to the session's file, every line through the redactor, one write per
exchange (``tracekit.proxy.trace_files``). A crash loses at most the exchanges in flight.

The write stays on the event loop, in the callback queued as soon as the answer is known; its last bytes
go to the client only once that ran and the file holds it (``Tracker.recorded``). A write and flush of one
exchange's lines costs a few microseconds (7 us on the benchmark machine), which a writer thread would
spend again handing the records over (and under the GIL no serialization runs beside the loop anyway);
and records waiting in a queue or a timer's batch would widen what ``kill -9`` can lose from the
exchanges in flight to every reply of the last batch. Each session has its own file and sends one
request at a time, so there is nothing to batch per file either. ``fsync=True`` (``--fsync``) adds an
fsync per exchange for those who need power-loss durability.

A failed attempt that the SDK will retry is written at once as an ``error`` record carrying what replay
needs (``request_key``, ``attempt``, the answer); the turn's ``model_call`` follows when an attempt
succeeds (``attempts`` = how many it took) or when the session moves on (``from_attempts``: the model
call sums up attempts already written, and replay answers from those error records).

Requests to other routes are written as ``http_exchange`` records, in their session's file when they name
one, else in a side file of the recording. A secret learnt after files were written (a key an agent pasted
into a prompt before another request sent it as a header) is scrubbed from those files at once
(``rescrub``), and once more when the recorder closes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tracekit import __version__
from tracekit.proxy.closed_traces import ClosedTraces
from tracekit.proxy.exchange import Exchange, Outcome
from tracekit.proxy.memory_release import compacted
from tracekit.proxy.records import attempt_error, injection_records, model_call, underived
from tracekit.proxy.sessions import Session
from tracekit.proxy.shared_texts import LONG_TEXT
from tracekit.proxy.trace_files import SessionTrace, scrub
from tracekit.proxy.written_tokens import IndexingRedactor, WrittenTokens
from tracekit.redact import Redactor
from tracekit.redact.stream import redact_stream
from tracekit.trace import ErrorRecord, HttpExchange, Intercept, ModelCall
from tracekit.trace.models import Header

log = logging.getLogger(__name__)
_R = TypeVar("_R", ModelCall, ErrorRecord)

#: The header's ``created`` (ISO 8601, UTC): what ``datetime.now(timezone.utc).isoformat(timespec="seconds")``
#: gives, without its ``utcoffset`` lookup, whose name string the type attribute cache keeps (``memory_release``).
CREATED_FORMAT = "%Y-%m-%dT%H:%M:%S+00:00"

#: Trace files kept open at once; a session's file is reopened (cheaply: it exists) when it has more.
MAX_OPEN_FILES = 128


@dataclass
class RecordingStats:
    """What a recorder wrote (``tracekit record`` prints it at exit)."""

    sessions: int = 0
    """Trace files of agent sessions."""
    exchanges: int = 0
    """Exchanges written, every route counted."""
    other_routes: int = 0
    """Of those, requests to routes that are not model endpoints tracekit reads."""
    unread: int = 0
    """Of those, answers with model output that tracekit does not read (recorded raw)."""


class Recorder:
    """Turns finished exchanges into trace records, one file per session under ``out_dir``."""

    def __init__(
        self,
        out_dir: str | Path | None,
        redactor: Redactor,
        *,
        source: str = "proxy",
        fsync: bool = False,
        case_id: str | None = None,
        deferred: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.out_dir = Path(out_dir) if out_dir is not None else None
        if self.out_dir is not None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
        self.redactor = redactor
        self.source = source
        self.fsync = fsync
        self.case_id = case_id
        self.deferred = deferred
        self.meta = meta or {}
        self.traces: list[SessionTrace] = []
        self.stats = RecordingStats()
        self.scrub_windows_ms: list[float] = []
        """How long each re-scrub took, from learning a secret to the last file replaced."""
        self._side: Session | None = None
        self._open_files: OrderedDict[SessionTrace, None] = OrderedDict()
        self._taken: set[Path] = set()
        self._opener = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tracekit-trace-files")
        self._scrubbing: asyncio.Lock | None = None
        self._tokens = WrittenTokens()
        self._expired: set[SessionTrace] = set()
        self._closed = ClosedTraces()
        """Trace files of expired sessions (scrubbed again at close with the secrets learnt since), on disk."""
        self._by_path: dict[Path, SessionTrace] = {}

    # -- the records of one exchange -------------------------------------------------------------------

    def record(self, session: Session, exchange: Exchange, outcome: Outcome, *, final: bool) -> None:
        """Record ``exchange``: its new conversation messages, injections and faults, then either the
        turn's model call (``final``) or an error record for an attempt the SDK will retry."""
        trace = self._trace(session, exchange.provider.NAME, exchange.turn.sent.body, exchange.t_wall)
        builder = trace.builder
        t = exchange.t_wall
        index = builder.model_call_count
        first_new = len(builder.records)
        sent = exchange.turn.sent
        side_call = exchange.turn.side_call
        if isinstance(sent.body, dict) and not side_call:
            # Whatever a client sent, the exchange itself is recorded: a conversation that cannot be
            # derived becomes an error record beside the model call, never a lost exchange.
            if sent.conversation.error is not None:
                builder.add(underived("request", sent.conversation.error, index, t))
            else:
                try:
                    injected = {i.tool_use_id for i in sent.injections if i.tool_use_id}
                    turn = exchange.turn
                    new_records = builder.add_conversation(turn.messages, sent.conversation.system, injected=injected,
                                                           timestamp=t, fingerprints=turn.fingerprints)  # fmt: skip
                    for record in injection_records(sent.injections, new_records, index, trace.injected_ids, t):
                        builder.add(record)
                except Exception as exc:  # any gap must not lose the exchange
                    builder.add(underived("request", f"{type(exc).__name__}: {exc}", index, t))
        for fault in exchange.turn.faults.applied:
            builder.add(Intercept(mode="fault", injected=fault.describe(), model_call=index, t=t))
        for record in exchange.turn.extra_records:  # an observer's (the guard's events)
            builder.add(record.model_copy(update={"model_call": index}))
        if final and side_call:
            builder.add_side_call(self._streamed(model_call(exchange, outcome)))
        elif final:
            call = self._streamed(model_call(exchange, outcome))
            try:
                # (appends the call before reading the reply)
                builder.add_model_call(call, outcome.reply, fingerprint=outcome.reply_fingerprint)
            except Exception as exc:  # as above: the call is kept, say what failed
                builder.add(underived("reply", f"{type(exc).__name__}: {exc}", call.index, t))
            if outcome.error is not None:
                builder.add(self._streamed(attempt_error(exchange, outcome, call.index, replayable=False)))
            if _is_large(exchange):
                trace.shared.remember(builder.records[first_new:])
                trace.shared.share(call)
        else:
            builder.add(self._streamed(attempt_error(exchange, outcome, index, replayable=True)))
        trace.exchanges += 1
        self.stats.exchanges += 1
        if exchange.received.source == "upstream" and trace.deferred:
            trace.materialize()
        self._flush(trace)

    def _streamed(self, record: _R) -> _R:
        """``record`` with the secrets of its stream's joined deltas replaced (``redact.stream``): a key the
        model streamed in pieces is in no single line the file writer scans."""
        sse = getattr(record, "sse", None)
        if sse and "sse" not in (getattr(record, "escaped", None) or ()):
            record.sse = redact_stream(sse, self.redactor)
        return record

    def record_other(self, session: Session | None, record: HttpExchange) -> Path | None:
        """Record a request to another route in ``session``'s trace (the side file without one); its path."""
        session = session or self._side_session()
        trace = self._trace(session, None, None, record.t or time.time())
        trace.builder.add(record)
        trace.exchanges += 1
        self.stats.exchanges += 1
        self.stats.other_routes += 1
        if record.model_output:
            self.stats.unread += 1
        if trace.deferred and not record.replayed:
            trace.materialize()
        self._flush(trace)
        return trace.path

    def abandon_attempts(self, session: Session) -> None:
        """The session moved on from a failed turn: write its model call from the last attempt."""
        pending = session.pending
        if pending is None or session.trace is None:
            return
        call = model_call(pending.exchange, pending.outcome)
        call.attempts = pending.attempts
        call.from_attempts = True
        trace = session.trace
        if pending.exchange.turn.side_call:
            trace.builder.add_side_call(call)
        else:
            trace.builder.add_model_call(call, None)
        self._flush(trace)

    def _flush(self, trace: SessionTrace) -> None:
        trace.flush()
        if trace.is_open:
            self._opened(trace)

    def _opened(self, trace: SessionTrace) -> None:
        """Keep at most ``MAX_OPEN_FILES`` trace files open: close the least recently written."""
        self._open_files[trace] = None
        self._open_files.move_to_end(trace)
        while len(self._open_files) > MAX_OPEN_FILES:
            oldest, _ = self._open_files.popitem(last=False)
            oldest.suspend()

    async def written(self) -> None:
        """Wait until every record recorded so far is in its file (tests, notebooks: no polling)."""
        if self._scrubbing is not None:
            async with self._scrubbing:
                pass
        for trace in list(self.traces):
            await trace.written()

    async def settled(self, trace: SessionTrace) -> None:
        """Wait until the records of ``trace`` recorded so far are in its file (after a scrub that holds it)."""
        if trace.held and self._scrubbing is not None:
            async with self._scrubbing:
                pass
        await trace.written()

    # -- secrets learnt late -----------------------------------------------------------------------------

    async def rescrub(self, secrets: list[str] | None = None) -> None:
        """Scrub the files written so far that may hold ``secrets`` (just learnt; None: every file) with the
        secrets known now. Which files may hold them is looked up in the index of words written
        (``written_tokens``), so the cost does not grow with what was recorded before. Each file is held
        meanwhile (its new records wait in memory) and replaced atomically when something changed."""
        if self._scrubbing is None:
            self._scrubbing = asyncio.Lock()
        learnt = time.perf_counter()
        async with self._scrubbing:
            traces = [trace for trace in self._may_hold(secrets) if trace.on_disk]
            if not traces:
                return
            loop = asyncio.get_running_loop()
            for trace in traces:
                trace.hold()
            futures = []
            for trace in traces:
                assert trace.path is not None
                futures.append(loop.run_in_executor(self._opener, _scrub_quietly, trace.path, self.redactor))
            job = asyncio.gather(*futures)
            # Released when the threads are done, even if the request that waits here is cancelled meanwhile.
            job.add_done_callback(lambda _: _release(traces))
            await asyncio.shield(job)
        self.scrub_windows_ms.append(round((time.perf_counter() - learnt) * 1000, 3))

    def close_session(self, session: Session) -> None:
        """The session expired: write what is left of its trace, close the file, scrub it once with every
        secret known now, and forget it (its path is kept for the scrub at close)."""
        trace = session.trace
        if trace is None:
            return
        trace.close()
        self._expired.add(trace)
        self._open_files.pop(trace, None)
        if trace.path is not None:
            self._tokens.forget(trace.path)
            self._by_path.pop(trace.path, None)
            self._taken.discard(trace.path)
            if trace.path.exists():
                _scrub_quietly(trace.path, self.redactor)
                self._closed.add(trace.path)

    def drop_closed(self) -> None:
        """Forget the traces ``close_session`` closed (once per batch of expired sessions)."""
        if self._expired:
            # In place, and compacted (containers keep their largest size): see ``memory_release``.
            self.traces[:] = [trace for trace in self.traces if trace not in self._expired]
            self._expired.clear()
            self._by_path = compacted(self._by_path)
            self._open_files = compacted(self._open_files)
            self._taken = compacted(self._taken)
            self._tokens.compact()

    def _may_hold(self, secrets: list[str] | None) -> list[SessionTrace]:
        if secrets is None:
            return list(self.traces)
        paths: set[object] = set()
        for secret in secrets:
            found = self._tokens.candidates(secret)
            if found is None:
                return list(self.traces)
            paths |= found
        return [self._by_path[path] for path in paths if path in self._by_path]

    def close(self) -> None:
        """Close every trace file, then scrub them once more with every secret learnt since they were
        written. One file's failure never keeps the others from closing or from the scrub."""
        self._opener.shutdown(wait=True)
        for trace in self.traces:
            try:
                trace.close()
            except Exception as exc:
                log.error("tracekit: could not finish %s: %s", trace.path, exc)
            finally:
                if trace.path is not None and trace.path.exists():
                    _scrub_quietly(trace.path, self.redactor)
        for closed in self._closed.paths():
            if closed.exists():
                _scrub_quietly(closed, self.redactor)
        self.stats.sessions = self._closed.count + sum(
            1 for trace in self.traces if trace.path is not None and trace.path.exists()
            and trace is not getattr(self._side, "trace", None))  # fmt: skip
        self._closed.close()

    # -- helpers ---------------------------------------------------------------------------------------

    def _side_session(self) -> Session:
        if self._side is None:
            self._side = Session(id=f"{time.strftime('%Y%m%dT%H%M%S')}-other-routes")
        return self._side

    def _trace(self, session: Session, provider: str | None, body: Any, t: float) -> SessionTrace:
        if session.trace is None:
            request = body if isinstance(body, dict) else {}
            model = request.get("model")
            header = Header(
                trace_id=session.id,
                created=time.strftime(CREATED_FORMAT, time.gmtime()),
                tracekit=__version__,
                source=self.source,
                session=session.named,
                provider=provider,
                model=model if isinstance(model, str) else None,
                case_id=self.case_id,
                meta=_header_meta(self.meta, session),
                t=t,
            )
            path = self._path_for(session)
            redactor = IndexingRedactor(self.redactor, self._tokens, path) if path is not None else self.redactor
            trace = SessionTrace(header, path, redactor, self.fsync, self.deferred, self._opener, self._opened)
            if path is not None:
                self._by_path[path] = trace
            session.trace = trace
            self.traces.append(trace)
            return trace
        trace = session.trace
        if trace.builder.header.provider is None and provider is not None:
            trace.builder.header.provider = provider  # a session whose first request was another route
        return trace

    def _path_for(self, session: Session) -> Path | None:
        if self.out_dir is None:
            return None
        path = self.out_dir / f"{session.id}.jsonl"
        number = 1
        while path in self._taken or os.path.exists(path):  # (os.path: half of pathlib's cost, once per session)
            number += 1
            path = self.out_dir / f"{session.id}-{number}.jsonl"
        self._taken.add(path)
        return path


def _header_meta(meta: dict[str, Any], session: Session) -> dict[str, Any]:
    """The trace header's meta: the recorder's, the trace file a returning session continues, and where a
    client named the session itself (``session_from``: the header or body field; its id is the header's
    ``session``)."""
    extra = {"continues": session.continues} if session.continues else {}
    if session.client:
        extra["session_from"] = session.client
    return {**meta, **extra} if extra else dict(meta)


def _is_large(exchange: Exchange) -> bool:
    """Whether the exchange can hold a text of ``LONG_TEXT`` characters (cheap: byte sizes only)."""
    received = exchange.received
    size = len(received.body or b"") + (sum(map(len, received.tee.chunks)) if received.tee is not None else 0)
    return len(exchange.turn.sent.raw) >= LONG_TEXT or size >= LONG_TEXT


def _release(traces: list[SessionTrace]) -> None:
    for trace in traces:
        trace.release()


def _scrub_quietly(path: Path, redactor: Redactor) -> None:
    try:
        scrub(path, redactor)
    except OSError as exc:  # a full disk must not stop the others
        log.error("tracekit: could not scrub %s again: %s", path, exc)
