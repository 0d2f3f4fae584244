"""One job from start to finish: upstream, proxy with the case's intercepts, the agent, the bound trace.

For each (case, group, repeat):

1. the upstream: the endpoint the model's client opens for this case (``tracekit.clients``): the model API
   (``--base-url`` or the provider's) by default, or whatever a client registered for the model name's
   prefix serves (an in-process stand-in, for instance);
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
from functools import cached_property
from pathlib import Path
from typing import Any, cast

from tracekit.cases.loader import CaseLibrary
from tracekit.clients import API_KEY_VARIABLES, DEFAULT_UPSTREAMS, ModelClient, ModelUse, WireProtocol, model_client
from tracekit.errors import RunSetupError
from tracekit.intercepts import config_from
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.proxy.observers import ExchangeObserver
from tracekit.runner.agent import AgentLimits, run_agent
from tracekit.runner.case_file import case_file_document, write_case_file
from tracekit.runner.conversation import AgentStart, agent_start
from tracekit.runner.external import PLACEHOLDER_KEY, AgentEnvironment, run_agent_command
from tracekit.runner.finalize import finalize_job
from tracekit.runner.jobs import Job
from tracekit.runner.mock_tools import MockToolExecutor
from tracekit.runner.simulated_user import simulated_user_for
from tracekit.runner.turn_clients import AnthropicTurnClient, OpenAITurnClient, TurnClient
from tracekit.trace import AgentRun

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
    observer: ExchangeObserver | None = None
    """Watches every exchange in each job's proxy (``ProxyConfig.observer``; the live guard)."""

    @property
    def scratch_root(self) -> Path:
        """``scratch_dir``, or a hidden folder of the run folder."""
        return self.scratch_dir if self.scratch_dir is not None else self.out_dir / SCRATCH_DIR

    @cached_property
    def client(self) -> ModelClient:
        """The model's client (``tracekit.clients``); ``ModelClientError`` for a name its prefix's client refuses."""
        return model_client(self.model)

    @property
    def source(self) -> str:
        """The trace header's ``source``: ``run:reference-agent`` or ``run:agent-cmd``; ``run:<model>`` (with
        ``:agent-cmd`` after it) for a simulated model, which is what made the answers."""
        if self.client.simulated:
            return f"run:{self.model}" + (":agent-cmd" if self.agent_cmd else "")
        return "run:agent-cmd" if self.agent_cmd else "run:reference-agent"

    def key(self) -> str:
        """The API key the reference agent uses: the one given, the model client's own (a placeholder for
        stand-ins), the provider's environment variable, or a placeholder for a keyless ``--base-url``."""
        if self.api_key:
            return self.api_key
        if self.client.api_key:
            return self.client.api_key
        value = os.environ.get(API_KEY_VARIABLES[self.provider])
        if value:
            return value
        if self.base_url:
            return PLACEHOLDER_KEY
        raise RunSetupError(
            f"set {API_KEY_VARIABLES[self.provider]} to run {self.model!r} (or give --base-url to a server that "
            "needs no key, or name a model whose prefix has a registered client: tracekit.clients)"
        )

    def use(self, job: Job | None = None) -> ModelUse:
        """What the model is opened for: the agent of ``job`` (or of any job, to check the settings)."""
        return ModelUse("agent", provider=cast(WireProtocol, self.provider), base_url=self.base_url,
                        case=job.case if job is not None else None, catalog=self.library.catalog)

    def check(self) -> None:
        """Fail early on a configuration no job could run with."""
        if self.provider not in DEFAULT_UPSTREAMS:
            raise RunSetupError(f"unknown provider {self.provider!r}; expected anthropic or openai")
        declined = self.client.declines(self.use())
        if declined:
            raise RunSetupError(f"{self.model!r} cannot run as an agent: {declined}")
        if not self.agent_cmd:
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
    with ExitStack() as stack:
        upstream = stack.enter_context(settings.client.open(settings.use(job)))
        meta.update(upstream.meta)
        proxy = stack.enter_context(RunningProxy(ProxyConfig(upstream=upstream.url, out_dir=scratch / "traces",
                                                             intercepts=config_from(case),
                                                             observer=settings.observer)))
        if settings.agent_cmd:
            closing, stop, error = _run_external(job, settings, start, tools, proxy.url, scratch)
        else:
            closing, stop, error = _run_reference(job, settings, start, tools, proxy.url, upstream.url, meta)
        model_errors = upstream.errors()
        if model_errors:
            error = "; ".join(model_errors)
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
                                   api_key=settings.client.api_key)
    closing = run_agent_command(settings.agent_cmd or "", environment, settings.timeout, settings.cwd)
    stop = "timeout" if closing.timed_out else f"exit {closing.exit_status}"
    return closing, stop, (closing.stderr[-500:] or stop) if closing.exit_status != 0 else None


def _run_reference(
    job: Job, settings: RunSettings, start: AgentStart, tools: MockToolExecutor, proxy_url: str, upstream_url: str,
    meta: dict[str, Any],
) -> tuple[AgentRun, str, str | None]:
    """The reference agent for one job, with the case's simulated user if it has one."""
    client = _client(settings, proxy_url, job.name)
    # A model-played user is harness traffic: it talks to the upstream directly and is not recorded. A
    # simulated model answers as the agent only, so it cannot play the user.
    user_client = None if settings.client.simulated else _client(settings, upstream_url, None)
    user = simulated_user_for(job.case.input.simulated_user, user_client)
    if user is not None:
        meta["simulated_user"] = type(user).__name__
    outcome = run_agent(start, client, tools, settings.limits, user)
    closing = AgentRun.model_validate({
        "command": "tracekit reference agent", "exit_status": 0 if outcome.error is None else 1,
        "duration_ms": outcome.duration_ms, "stderr": outcome.error or "", **outcome.as_record_fields(),
    })
    return closing, outcome.stop, outcome.error


def _client(settings: RunSettings, url: str, session: str | None) -> TurnClient:
    if settings.provider == "openai":
        return OpenAITurnClient(settings.model, url.rstrip("/") + ("" if url.endswith("/v1") else "/v1"),
                                 settings.key(), session=session)
    return AnthropicTurnClient(settings.model, url, settings.key(), session=session)
