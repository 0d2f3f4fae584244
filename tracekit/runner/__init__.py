"""Running cases: the reference agent, external agents, repeats and reliability.

- ``run_agent``: the reference agent (a tool-use loop on the official SDK) on ``AgentStart``.
- ``run_job`` / ``run_jobs``: one (case, group, repeat) job, or a whole run, through the in-process proxy,
  in front of the endpoint the model's client opens (``tracekit.clients``).

Names are imported on first use, so that importing one part does not pull in the proxy and the SDKs.
(pass^k and the Group A vs B pairing live in ``tracekit.analyze.reliability``.)
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AgentLimits": "agent",
    "AgentOutcome": "agent",
    "run_agent": "agent",
    "AgentStart": "conversation",
    "agent_start": "conversation",
    "initial_messages": "conversation",
    "system_prompt": "conversation",
    "JobResult": "harness",
    "RunSettings": "harness",
    "RunSetupError": "harness",
    "run_job": "harness",
    "Job": "jobs",
    "completed_jobs": "jobs",
    "plan_jobs": "jobs",
    "MockToolExecutor": "mock_tools",
    "ToolOutcome": "mock_tools",
    "RunReport": "run",
    "run_jobs": "run",
    "select_cases": "selection",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tracekit.runner' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tracekit.runner.{module}"), name)


__all__ = [
    "AgentLimits",
    "AgentOutcome",
    "AgentStart",
    "Job",
    "JobResult",
    "MockToolExecutor",
    "RunReport",
    "RunSettings",
    "RunSetupError",
    "ToolOutcome",
    "agent_start",
    "completed_jobs",
    "initial_messages",
    "plan_jobs",
    "run_agent",
    "run_job",
    "run_jobs",
    "select_cases",
    "system_prompt",
]
