"""Case intercepts and transport faults, applied by the proxy to each model request.

- ``ToolIntercept`` / ``ToolMock``: the seeds' ``tool_intercept`` and ``tool_mock``, objects with one
  method (``replacement_for``) that may replace a tool result.
- ``rewrite_request``: applies them to a request body, statelessly, and reports each ``Injection``.
- ``Fault`` / ``active_faults``: HTTP errors, latency, stream cuts and in-stream errors.
- ``load_intercept_config`` / ``config_from``: from a case file, a Case, or raw seed JSON.
"""

from tracekit.intercepts.base import Injection, Replacement, ResultIntercept, SeenCall
from tracekit.intercepts.config import InterceptConfig, config_from, intercept_from, load_intercept_config
from tracekit.intercepts.faults import NO_FAULTS, ActiveFaults, Fault, active_faults
from tracekit.intercepts.rewrite import Rewrite, rewrite_request
from tracekit.intercepts.tool_intercept import ToolIntercept
from tracekit.intercepts.tool_mock import MockedCall, ToolMock, contains

__all__ = [
    "NO_FAULTS",
    "ActiveFaults",
    "Fault",
    "Injection",
    "InterceptConfig",
    "MockedCall",
    "Replacement",
    "ResultIntercept",
    "Rewrite",
    "SeenCall",
    "ToolIntercept",
    "ToolMock",
    "active_faults",
    "config_from",
    "contains",
    "intercept_from",
    "load_intercept_config",
    "rewrite_request",
]
