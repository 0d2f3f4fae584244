"""One job from start to finish: upstream, proxy with the case's intercepts, the agent, the bound trace.

For each (case, group, repeat):

1. the upstream: the model API (``--base-url`` or the provider's), or for ``scripted:<policy>`` models a
   ``FakeUpstream`` answering with that policy for this case;
2. an in-process proxy (``tracekit.proxy.RunningProxy``) in front of it, with the case's intercepts and
   faults, recording into the job's scratch folder;
3. the agent: the reference agent (``tracekit.runner.agent``) or the ``--agent-cmd`` process, with the
   session named ``<case>__<group>__r<repeat>``;
4. the trace, bound to case, group and repeat, closed by an ``agent_run`` record, renamed into the run folder.
"""

from __future__ import annotations

import os
import shutil
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracekit.cases.loader import CaseLibrary
from tracekit.errors import RunSetupError
from tracekit.intercepts import config_from
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.runner.agent import AgentLimits, run_agent
from tracekit.runner.case_file import case_file_document, write_case_file
from tracekit.runner.clients import AnthropicModelClient, ModelClient, OpenAIModelClient
from tracekit.runner.conversation import AgentStart, agent_start
from tracekit.runner.external import PLACEHOLDER_KEY, AgentEnvironment, run_agent_command
from tracekit.runner.finalize import finalize_job
from tracekit.runner.jobs import Job
from tracekit.runner.mock_tools import MockToolExecutor
from tracekit.runner.simulated_user import simulated_user_for
from tracekit.trace import AgentRun

SCRIPTED_PREFIX = "scripted:"
DEFAULT_UPSTREAMS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
API_KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
SCRATCH_DIR = ".tracekit-run"


@dataclass
class RunSettings:
    """What every job of a run shares."""

    library: CaseLibrary
    out_dir: Path
    model: str
    provider: str = "anthropic"
    base_url: str | None = None
    agent_cmd: str | None = None
    timeout: float = 600.0
    limits: AgentLimits = field(default_factory=AgentLimits)
    api_key: str | None = None
    cwd: str | None = None
    drop_request_bodies: bool = False
    """Leave model calls' request bodies out of the traces (``tracekit.runner.finalize``)."""
    scratch_dir: Path | None = None
    """Where jobs keep their work in progress (the proxy's files, the case file); ``run_jobs`` uses a
    temporary folder outside the run folder, so an interrupted run leaves nothing half-written in it."""

    @property
    def scratch_root(self) -> Path:
        """``scratch_dir``, or a hidden folder of the run folder."""
        return self.scratch_dir if self.scratch_dir is not None else self.out_dir / SCRATCH_DIR

    @property
    def scripted_policy(self) -> str | None:
        """``reference`` for ``scripted:reference``; None for a real model."""
        return self.model[len(SCRIPTED_PREFIX):] if self.model.startswith(SCRIPTED_PREFIX) else None

    @property
    def source(self) -> str:
        """The trace header's ``source``: ``run:scripted:<policy>``, ``run:reference-agent`` or ``run:agent-cmd``."""
        if self.scripted_policy is not None:
            return f"run:{self.model}" + (":agent-cmd" if self.agent_cmd else "")
        return "run:agent-cmd" if self.agent_cmd else "run:reference-agent"

    def key(self) -> str:
        """The API key the reference agent uses (a placeholder for scripted models and keyless servers)."""
        if self.api_key:
            return self.api_key
        if self.scripted_policy is not None:
            return PLACEHOLDER_KEY
        value = os.environ.get(API_KEY_VARIABLES[self.provider])
        if value:
            return value
        if self.base_url:
            return PLACEHOLDER_KEY
        raise RunSetupError(
            f"set {API_KEY_VARIABLES[self.provider]} to run {self.model!r} (or give --base-url to a server that "
            "needs no key, or use --model scripted:reference for the offline demo)"
        )

    def check(self) -> None:
        """Fail early on a configuration no job could run with."""
        if self.provider not in DEFAULT_UPSTREAMS:
            raise RunSetupError(f"unknown provider {self.provider!r}; expected anthropic or openai")
        policy = self.scripted_policy
        if policy is not None:
            from tracekit.runner.policies import POLICIES

            if policy not in POLICIES:
                raise RunSetupError(f"unknown scripted policy {policy!r}; expected one of {', '.join(POLICIES)}")
        elif not self.agent_cmd:
            self.key()


@dataclass
class JobResult:
    """How one job ended."""

    job: Job
    path: Path | None
    stop: str
    error: str | None = None


def run_job(job: Job, settings: RunSettings) -> JobResult:
    """Run one job (see the module docstring); returns where its trace is."""
    library = settings.library
    case = job.case
    scratch = settings.scratch_root / job.name
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    tools = MockToolExecutor.for_case(library.catalog, case.context.tools)
    start = agent_start(case, job.skill_group, tools.tool_params(), library.skills, library.root)
    meta: dict[str, Any] = {"run": {"model": settings.model, "provider": settings.provider,
                                    "agent": settings.agent_cmd or "reference", "skills": start.skills}}
    if settings.scripted_policy is not None:
        from tracekit.runner.policies import plan_for

        plan = plan_for(settings.scripted_policy, case, library.catalog)
        meta["policy"] = {"name": settings.scripted_policy, "failure": plan.failure, "note": plan.note,
                          "made_by": "tracekit scripted policy on the fake upstream; no model was called"}
    with ExitStack() as stack:
        upstream = stack.enter_context(_Upstream(settings, job))
        proxy = stack.enter_context(RunningProxy(ProxyConfig(upstream=upstream.url, out_dir=scratch / "traces",
                                                             intercepts=config_from(case))))
        if settings.agent_cmd:
            closing, stop, error = _run_external(job, settings, start, tools, proxy.url, scratch)
        else:
            closing, stop, error = _run_reference(job, settings, start, tools, proxy.url, upstream.url, meta)
        if upstream.errors:
            error = "; ".join(upstream.errors)
    header = {"case_id": case.id, "group": job.group, "repeat": job.repeat, "source": settings.source, "meta": meta}
    session_files = sorted((scratch / "traces").glob("*.jsonl"))
    trace_id = f"{job.name}@{settings.model}"
    path = finalize_job(job, session_files, settings.out_dir, header, closing, trace_id=trace_id,
                        drop_request_bodies=settings.drop_request_bodies)
    shutil.rmtree(scratch, ignore_errors=True)
    return JobResult(job, path, stop, error)


def _run_external(
    job: Job, settings: RunSettings, start: AgentStart, tools: MockToolExecutor, proxy_url: str, scratch: Path
) -> tuple[AgentRun, str, str | None]:
    """The ``--agent-cmd`` process for one job: case file, environment, timeout."""
    document = case_file_document(job, start, tools, model=settings.model, provider=settings.provider,
                                  limits=settings.limits)
    case_file = write_case_file(scratch / "case.json", document)
    environment = AgentEnvironment(proxy_url, job.name, str(case_file.resolve()), settings.model, settings.provider,
                                   placeholder_keys=settings.scripted_policy is not None)
    closing = run_agent_command(settings.agent_cmd or "", environment, settings.timeout, settings.cwd)
    stop = "timeout" if closing.timed_out else f"exit {closing.exit_status}"
    return closing, stop, (closing.stderr[-500:] or stop) if closing.exit_status != 0 else None


def _run_reference(
    job: Job, settings: RunSettings, start: AgentStart, tools: MockToolExecutor, proxy_url: str, upstream_url: str,
    meta: dict[str, Any],
) -> tuple[AgentRun, str, str | None]:
    """The reference agent for one job, with the case's simulated user if it has one."""
    client = _client(settings, proxy_url, job.name)
    # A model-played user is harness traffic: it talks to the upstream directly and is not recorded.
    user_client = _client(settings, upstream_url, None) if settings.scripted_policy is None else None
    user = simulated_user_for(job.case.input.simulated_user, user_client)
    if user is not None:
        meta["simulated_user"] = type(user).__name__
    outcome = run_agent(start, client, tools, settings.limits, user)
    closing = AgentRun.model_validate({
        "command": "tracekit reference agent", "exit_status": 0 if outcome.error is None else 1,
        "duration_ms": outcome.duration_ms, "stderr": outcome.error or "", **outcome.as_record_fields(),
    })
    return closing, outcome.stop, outcome.error


def _client(settings: RunSettings, url: str, session: str | None) -> ModelClient:
    if settings.provider == "openai":
        return OpenAIModelClient(settings.model, url.rstrip("/") + ("" if url.endswith("/v1") else "/v1"),
                                 settings.key(), session=session)
    return AnthropicModelClient(settings.model, url, settings.key(), session=session)


class _Upstream:
    """The job's upstream: a FakeUpstream with the scripted policy, or the configured API."""

    def __init__(self, settings: RunSettings, job: Job) -> None:
        self.settings = settings
        self.job = job
        self.url = ""
        self._fake: Any = None

    def __enter__(self) -> _Upstream:
        policy = self.settings.scripted_policy
        if policy is None:
            self.url = self.settings.base_url or DEFAULT_UPSTREAMS[self.settings.provider]
            return self
        from tracekit.runner.policies import policy_script
        from tracekit.testing import FakeUpstream

        script = policy_script(policy, self.job.case, self.settings.library)
        self._fake = FakeUpstream(script).start()
        self.url = self._fake.url
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._fake is not None:
            self._fake.close()

    @property
    def errors(self) -> list[str]:
        """Exceptions the scripted policy raised (each was answered with a 500)."""
        return [f"{type(exc).__name__}: {exc}" for exc in (self._fake.errors if self._fake is not None else [])]
