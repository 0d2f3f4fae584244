"""The detectors of DESIGN.md "Detectors", one module each, registered in ``REGISTRY`` on import.

A detector is a ``DetectorStream`` fed one call at a time (or a function ``(DetectorContext) ->
list[Finding]`` of the whole trace) registered with ``@detector(kind, **default_options)``; see
``registry.py``. Detectors of installed packages (entry-point group ``tracekit.detectors``) are added after
the built-in ones. Offline analysis runs them all in one fused pass (``detect``); the live guard feeds the
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
    INSTALL_PROBLEMS,
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
    load_installed,
    resolve_options,
    run_detectors,
)

load_installed()  # detectors of installed packages, after the built-in ones

__all__ = [
    "INSTALL_PROBLEMS",
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
    "load_installed",
    "resolve_options",
    "run_detectors",
]
