"""The detectors of DESIGN.md "Detectors", one module each, registered in ``REGISTRY`` on import.

A detector is a ``DetectorStream`` fed one call at a time (or a function ``(DetectorContext) ->
list[Finding]`` of the whole trace) registered with ``@detector(kind, **default_options)``; see
``registry.py``. Offline analysis runs them all in one fused pass (``detect``); the live guard feeds the
same streams as a session runs.
"""

from tracekit.analyze.detectors import (  # noqa: F401  (each module registers its detector)
    alternating_loop,
    order_violation,
    repeated_call,
    repeated_text,
    retry_storm,
    tool_result_mismatch,
    ungrounded_argument,
    unused_output,
)
from tracekit.analyze.detectors.registry import (
    REGISTRY,
    DetectorContext,
    DetectorOptionError,
    DetectorRun,
    DetectorSpec,
    DetectorStream,
    Finding,
    Severity,
    detect,
    detector,
    resolve_options,
    run_detectors,
)

__all__ = [
    "REGISTRY",
    "DetectorContext",
    "DetectorOptionError",
    "DetectorRun",
    "DetectorSpec",
    "DetectorStream",
    "Finding",
    "Severity",
    "detect",
    "detector",
    "resolve_options",
    "run_detectors",
]
