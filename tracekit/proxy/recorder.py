"""Writing each session's trace as its exchanges finish: one JSONL file per session.

Records are derived by the trace's ``TraceBuilder`` (each request re-sends the history; only what is new
is recorded) and appended to the session's file, every line through the redactor, one write per
exchange (``tracekit.proxy.trace_files``). A crash loses at most the exchanges in flight.

A failed attempt that the SDK will retry is written at once as an ``error`` record carrying what replay
needs (``request_key``, ``attempt``, the answer); the turn's ``model_call`` follows when an attempt
succeeds (``attempts`` = how many it took) or when the session moves on (``from_attempts``: the model
call summarizes attempts already written, and replay answers from those error records).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tracekit import __version__
from tracekit.intercepts import Injection
from tracekit.proxy.exchange import Exchange, Outcome
from tracekit.proxy.sessions import Session
from tracekit.proxy.trace_files import SessionTrace, scrub
from tracekit.redact import Redactor
from tracekit.trace import ErrorRecord, Header, Intercept, ModelCall, ToolResult

log = logging.getLogger(__name__)

#: Trace files kept open at once; a session's file is reopened (cheaply: it exists) when it has more.
MAX_OPEN_FILES = 128


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
        self._open_files: OrderedDict[SessionTrace, None] = OrderedDict()
        self._taken: set[Path] = set()
        self._opener = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tracekit-trace-files")

    # -- the records of one exchange -------------------------------------------------------------------

    def record(self, session: Session, exchange: Exchange, outcome: Outcome, *, final: bool) -> None:
        """Record ``exchange``: its new conversation messages, injections and faults, then either the
        turn's model call (``final``) or an error record for an attempt the SDK will retry."""
        trace = self._trace(session, exchange)
        builder = trace.builder
        provider = exchange.provider
        t = exchange.t_wall
        model_call = builder.model_call_count
        if isinstance(exchange.sent_body, dict):
            # Whatever a client sent, the exchange itself is recorded: a conversation that cannot be
            # derived becomes an error record beside the model call, never a lost exchange.
            try:
                body = {**exchange.sent_body, "messages": exchange.full_messages}
                system, messages = provider.request_conversation(body)
                injected = {i.tool_use_id for i in exchange.injections if i.tool_use_id}
                new_records = builder.add_conversation(messages, system, injected=injected, timestamp=t)
                self._intercepts(trace, exchange.injections, new_records, t)
            except Exception as exc:  # any provider gap must not lose the exchange
                builder.add(_underived("request", exc, model_call, t))
        for fault in exchange.faults.applied:
            builder.add(Intercept(mode="fault", injected=fault.describe(), model_call=model_call, t=t))
        if final:
            call = self._model_call(exchange, outcome)
            try:
                builder.add_model_call(call, outcome.reply)  # appends the call before reading the reply
            except Exception as exc:  # as above: the call is kept, say what failed
                builder.add(_underived("reply", exc, call.index, t))
            if outcome.error is not None:
                builder.add(self._error(exchange, outcome, call.index, replayable=False))
        else:
            builder.add(self._error(exchange, outcome, model_call, replayable=True))
        if exchange.miss and trace.deferred:
            trace.materialize()
        trace.flush()
        if trace.is_open:
            self._opened(trace)

    def abandon_attempts(self, session: Session) -> None:
        """The session moved on from a failed turn: write its model call from the last attempt."""
        pending = session.pending
        if pending is None or session.trace is None:
            return
        exchange: Exchange = pending.exchange
        outcome = exchange.outcome()
        call = self._model_call(exchange, outcome)
        call.attempts = pending.attempts
        extra: Any = call
        extra.from_attempts = True
        session.trace.builder.add_model_call(call, None)
        session.trace.flush()

    def _opened(self, trace: SessionTrace) -> None:
        """Keep at most ``MAX_OPEN_FILES`` trace files open: close the least recently written."""
        self._open_files[trace] = None
        self._open_files.move_to_end(trace)
        while len(self._open_files) > MAX_OPEN_FILES:
            oldest, _ = self._open_files.popitem(last=False)
            oldest.suspend()

    def close(self) -> None:
        """Close every trace file, then scrub them once more with every secret learnt since they were
        written (a key can appear in a prompt before the proxy sees it in a header)."""
        self._opener.shutdown(wait=True)
        for trace in self.traces:
            try:
                trace.close()
                if trace.path is not None and trace.path.exists():
                    scrub(trace.path, self.redactor)
            except OSError as exc:  # a full disk must not stop the others from closing
                log.error("tracekit: could not finish %s: %s", trace.path, exc)

    # -- helpers ---------------------------------------------------------------------------------------

    def _trace(self, session: Session, exchange: Exchange) -> SessionTrace:
        if session.trace is None:
            provider = exchange.provider
            body = exchange.sent_body if isinstance(exchange.sent_body, dict) else {}
            header = Header(
                trace_id=session.id,
                created=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                tracekit=__version__,
                source=self.source,
                session=session.named,
                provider=provider.NAME,
                model=provider.request_model(body),
                case_id=self.case_id,
                meta=dict(self.meta),
                t=exchange.t_wall,
            )
            trace = SessionTrace(header, self._path_for(session), self.redactor, self.fsync, self.deferred,
                                 self._opener, self._opened)  # fmt: skip
            session.trace = trace
            self.traces.append(trace)
        existing: SessionTrace = session.trace
        return existing

    def _path_for(self, session: Session) -> Path | None:
        if self.out_dir is None:
            return None
        path = self.out_dir / f"{session.id}.jsonl"
        number = 1
        while path in self._taken or path.exists():
            number += 1
            path = self.out_dir / f"{session.id}-{number}.jsonl"
        self._taken.add(path)
        return path

    @staticmethod
    def _intercepts(trace: SessionTrace, injections: list[Injection], new_records: list[Any], t: float) -> None:
        model_call = trace.builder.model_call_count
        calls = {r.tool_use_id: r.call_index for r in new_records if isinstance(r, ToolResult)}
        for injection in injections:
            if injection.tool_use_id in trace.injected_ids:
                continue
            if injection.tool_use_id:
                trace.injected_ids.add(injection.tool_use_id)
            trace.builder.add(
                Intercept(
                    mode=injection.mode,
                    tool=injection.tool,
                    tool_use_id=injection.tool_use_id,
                    call_index=calls.get(injection.tool_use_id),
                    original=injection.original,
                    injected=injection.injected,
                    is_error=injection.is_error,
                    model_call=model_call,
                    original_is_error=injection.original_is_error,
                    t=t,
                )
            )

    @staticmethod
    def _model_call(exchange: Exchange, outcome: Outcome) -> ModelCall:
        provider = exchange.provider
        body = exchange.sent_body if isinstance(exchange.sent_body, dict) else None
        response = outcome.response or {}
        ended = exchange.t_end or exchange.t0
        call = ModelCall(
            index=0,
            provider=provider.NAME,
            model=(provider.request_model(body) if body else None) or provider.response_model(response),
            stream=exchange.stream,
            status=exchange.status,
            request=body,
            request_raw=None if body is not None else exchange.sent_raw.decode("utf-8", "replace"),
            request_key=exchange.key,
            response=outcome.response,
            sse=exchange.tee.text if exchange.tee is not None else None,
            event_offsets_ms=exchange.tee.offsets_ms if exchange.tee is not None else None,
            usage=provider.response_usage(response),
            stop_reason=provider.response_stop_reason(response),
            latency_ms=round((ended - exchange.t0) * 1000, 3),
            ttft_ms=round((exchange.t_first - exchange.t0) * 1000, 3) if exchange.t_first else None,
            attempts=exchange.attempt,
            partial=outcome.partial,
            error=outcome.error,
            t=exchange.t_wall,
        )
        extra: Any = call
        extra.response_headers = exchange.response_headers or None
        extra.stitched = exchange.how
        if exchange.fault_answer:
            extra.fault = True
        if exchange.miss_answer:
            extra.replay_miss = True
        if exchange.replayed:
            extra.replayed = True
        if exchange.failure:
            extra.transport = exchange.failure
        if exchange.parse_error is not None:
            extra.request_parse_error = exchange.parse_error
        return call

    @staticmethod
    def _error(exchange: Exchange, outcome: Outcome, model_call: int, *, replayable: bool) -> ErrorRecord:
        source = "transport" if exchange.failure else ("client" if exchange.client_gone else "upstream")
        if exchange.fault_answer or exchange.miss_answer:
            source = "proxy"
        error = outcome.error or {}
        message = str(error.get("message") or error.get("type") or "the exchange failed")
        if exchange.client_gone:
            message = "the client disconnected before the response ended"
        record = ErrorRecord(
            source=source,
            message=message,
            status=exchange.status,
            body=outcome.response if outcome.response is not None else outcome.error,
            model_call=model_call,
            t=exchange.t_wall,
        )
        extra: Any = record
        extra.attempt = exchange.attempt
        extra.provider = exchange.provider.NAME
        if replayable and not exchange.fault_answer and not exchange.miss_answer:
            extra.request_key = exchange.key
            extra.stream = exchange.stream
            extra.partial = outcome.partial
            extra.response_headers = exchange.response_headers or None
            extra.transport = exchange.failure
            if exchange.tee is not None:
                extra.sse = exchange.tee.text
                extra.event_offsets_ms = exchange.tee.offsets_ms
            extra.latency_ms = round(((exchange.t_end or exchange.t0) - exchange.t0) * 1000, 3)
        return record


def _underived(what: str, exc: Exception, model_call: int, t: float) -> ErrorRecord:
    """The error record of a request or reply whose conversation messages could not be derived."""
    return ErrorRecord(
        source="proxy",
        message=f"could not derive the conversation from the {what} ({type(exc).__name__}: {exc}); "
        "the model call is recorded as sent",
        model_call=model_call,
        t=t,
    )
