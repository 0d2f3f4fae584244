"""Running cases: the reference agent, external agents, scripted policies, repeats and reliability.

- ``run_agent``: the reference agent (a tool-use loop on the official SDK) on ``AgentStart``.
- ``run_job`` / ``run_jobs``: one (case, group, repeat) job, or a whole run, through the in-process proxy.
- ``pass_hat_k`` / ``reliability_summary`` / ``paired_groups``: pass^k, flaky cases, Group A vs B.
- ``tracekit.runner.policies``: the scripted policies of the offline demo.

Names are imported on first use, so that ``tracekit.runner.reliability`` (used by analysis) does not
pull in the proxy and the SDKs.
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
    "CaseReliability": "reliability",
    "paired_groups": "reliability",
    "pass_hat_k": "reliability",
    "reliability_summary": "reliability",
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
    "CaseReliability",
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
    "paired_groups",
    "pass_hat_k",
    "plan_jobs",
    "reliability_summary",
    "run_agent",
    "run_job",
    "run_jobs",
    "select_cases",
    "system_prompt",
]
