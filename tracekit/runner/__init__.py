"""Running cases: the reference agent, external agents, repeats and reliability.

- ``run_agent``: the reference agent (a tool-use loop on the official SDK) on ``AgentStart``.
- ``run_job`` / ``run_jobs``: one (case, group, repeat) job, or a whole run, through the in-process proxy,
  in front of the endpoint the model's client opens (``tracekit.clients``).

Names are imported on first use, so that importing one part does not pull in the proxy and the SDKs.
(pass^k and the Group A vs B pairing live in ``tracekit.analyze.reliability``.)
"""

from __future__ import annotations

from tracekit.lazy import lazy_exports

#: Each public name, by the module of the package that defines it.
_HOMES = {
    "agent": ["AgentLimits", "AgentOutcome", "run_agent"],
    "conversation": ["AgentStart", "agent_start", "initial_messages", "system_prompt"],
    "harness": ["JobResult", "RunSettings", "RunSetupError", "run_job"],
    "jobs": ["Job", "completed_jobs", "plan_jobs", "select_cases"],
    "mock_tools": ["MockToolExecutor", "ToolOutcome"],
    "run": ["RunReport", "run_jobs"],
}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES)

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
