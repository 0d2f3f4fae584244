"""Running cases: the reference agent, external agents, scripted policies, repeats and reliability.

- ``run_agent``: the reference agent (a tool-use loop on the official SDK) on ``AgentStart``.
- ``run_job`` / ``run_jobs``: one (case, group, repeat) job, or a whole run, through the in-process proxy.
- ``pass_hat_k`` / ``reliability_summary`` / ``paired_groups``: pass^k, flaky cases, Group A vs B.
- ``tracekit.runner.policies``: the scripted policies of the offline demo.
"""

from tracekit.runner.agent import AgentLimits, AgentOutcome, run_agent
from tracekit.runner.conversation import AgentStart, agent_start, initial_messages, system_prompt
from tracekit.runner.harness import JobResult, RunSettings, RunSetupError, run_job
from tracekit.runner.jobs import Job, completed_jobs, plan_jobs
from tracekit.runner.mock_tools import MockToolExecutor, ToolOutcome
from tracekit.runner.reliability import CaseReliability, paired_groups, pass_hat_k, reliability_summary
from tracekit.runner.run import RunReport, run_jobs
from tracekit.runner.selection import select_cases

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
