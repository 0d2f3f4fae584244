"""The detectors of DESIGN.md "Detectors", one module each, registered in ``REGISTRY`` on import.

A detector is a function ``(DetectorContext) -> list[Finding]`` registered with ``@detector(kind,
**default_options)``; see ``registry.py``.
"""

from tracekit.analyze.detectors import (  # noqa: F401  (each module registers its detector)
    alternating_loop,
    order_violation,
    repeated_call,
    repeated_text,
    retry_storm,
    ungrounded_argument,
    unused_output,
)
from tracekit.analyze.detectors.registry import (
    REGISTRY,
    DetectorContext,
    DetectorOptionError,
    DetectorSpec,
    Finding,
    Severity,
    detector,
    resolve_options,
    run_detectors,
)

__all__ = [
    "REGISTRY",
    "DetectorContext",
    "DetectorOptionError",
    "DetectorSpec",
    "Finding",
    "Severity",
    "detector",
    "resolve_options",
    "run_detectors",
]
