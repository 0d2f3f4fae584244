"""Transport faults: what the proxy does to a model request on top of the tool-result intercepts.

- ``http_error``: answer with an HTTP error in the provider's error shape, without asking upstream;
  the ``x-should-retry`` header is set on purpose when ``should_retry`` is given.
- ``latency``: wait before the response starts.
- ``stream_cut``: close the connection after N events of an SSE response (no clean end).
- ``stream_error``: after N events, send the provider's in-stream error event and end the stream.

Each fault applies to the 1-based model requests of a session listed in ``on_requests`` (every request
when absent). SDK retries count as requests, so ``on_requests: [1]`` makes a transient failure that a
retry gets past.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tracekit.errors import CaseError

FAULT_TYPES = ("http_error", "latency", "stream_cut", "stream_error")


@dataclass(frozen=True)
class Fault:
    """One configured transport fault (the case file's ``faults`` entry)."""

    type: str
    on_requests: frozenset[int] | None = None
    status: int = 500
    body: Any = None
    should_retry: bool | None = None
    latency_ms: float = 0.0
    after_events: int = 0
    error_type: str = "overloaded_error"
    message: str = "Overloaded"

    def applies_to(self, request_number: int) -> bool:
        """Whether the fault hits the ``request_number``-th (1-based) model request of a session."""
        return self.on_requests is None or request_number in self.on_requests

    @classmethod
    def from_config(cls, config: Mapping[str, Any], where: str = "fault") -> Fault:
        """Build from a case's fault entry (a dict; pydantic models are dumped to one first)."""
        kind = config.get("type")
        if kind not in FAULT_TYPES:
            raise CaseError(f"{where}.type: expected one of {', '.join(FAULT_TYPES)}, got {kind!r}")
        requests = config.get("on_requests")
        on_requests = frozenset(int(n) for n in requests) if requests is not None else None
        if kind == "http_error":
            status = int(config.get("status", 500))
            if not 400 <= status <= 599:
                raise CaseError(f"{where}.status: expected an HTTP error status (400-599), got {status}")
            return cls(kind, on_requests, status=status, body=config.get("body"),
                       should_retry=config.get("should_retry"))  # fmt: skip
        if kind == "latency":
            return cls(kind, on_requests, latency_ms=float(config.get("latency_ms", 0)))
        if kind == "stream_cut":
            return cls(kind, on_requests, after_events=int(config.get("cut_after_events", 0)))
        return cls(
            kind,
            on_requests,
            after_events=int(config.get("after_events", 0)),
            error_type=str(config.get("error_type", "overloaded_error")),
            message=str(config.get("message", "Overloaded")),
        )

    def describe(self) -> dict[str, Any]:
        """The fault as the trace's Intercept record shows it."""
        if self.type == "http_error":
            return {"type": self.type, "status": self.status, "should_retry": self.should_retry}
        if self.type == "latency":
            return {"type": self.type, "latency_ms": self.latency_ms}
        if self.type == "stream_cut":
            return {"type": self.type, "cut_after_events": self.after_events}
        return {"type": self.type, "after_events": self.after_events, "error_type": self.error_type}


@dataclass(frozen=True)
class ActiveFaults:
    """The faults that hit one request, merged (one of each kind at most; the first configured wins)."""

    http_error: Fault | None = None
    latency_ms: float = 0.0
    cut_after_events: int | None = None
    stream_error: Fault | None = None
    applied: tuple[Fault, ...] = ()

    @property
    def any(self) -> bool:
        """Whether any fault applies."""
        return bool(self.applied)


NO_FAULTS = ActiveFaults()


def active_faults(faults: Iterable[Fault], request_number: int) -> ActiveFaults:
    """The faults of ``faults`` that hit the ``request_number``-th request of a session."""
    http_error: Fault | None = None
    latency = 0.0
    cut: int | None = None
    stream_error: Fault | None = None
    applied: list[Fault] = []
    for fault in faults:
        if not fault.applies_to(request_number):
            continue
        if fault.type == "http_error" and http_error is None:
            http_error = fault
        elif fault.type == "latency":
            latency += fault.latency_ms
        elif fault.type == "stream_cut" and cut is None:
            cut = fault.after_events
        elif fault.type == "stream_error" and stream_error is None:
            stream_error = fault
        else:
            continue
        applied.append(fault)
    if not applied:
        return NO_FAULTS
    return ActiveFaults(http_error, latency, cut, stream_error, tuple(applied))
