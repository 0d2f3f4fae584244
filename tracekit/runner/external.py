"""Running someone else's agent (``tracekit run --agent-cmd CMD``) once per job, through the proxy.

The command is split like a shell would (``shlex``) and run without a shell, in its own process group,
with the job's environment (docs/external-agents.md):

- ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``: the job's proxy (the official SDKs read them);
- ``TRACEKIT_SESSION``: the job's session name, to send as the ``x-tracekit-session`` header;
- ``TRACEKIT_CASE_FILE``: the case file (``tracekit.runner.case_file``);
- ``TRACEKIT_MODEL`` / ``TRACEKIT_PROVIDER``: the model and provider the run was asked for;
- for a model whose client has a key of its own (a stand-in's placeholder), ``ANTHROPIC_API_KEY`` /
  ``OPENAI_API_KEY`` set to it when they are unset.

When the timeout is over the whole process group is killed. The exit status, whether it timed out, and
the tail of standard error (redacted when the trace is written) become the trace's ``agent_run`` record.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from tracekit.trace import AgentRun

#: Bytes of standard error (and output) kept in the agent_run record.
TAIL_BYTES = 8000
#: API key placeholder for a ``--base-url`` server that needs no key.
PLACEHOLDER_KEY = "tracekit-no-key"

_live: set[subprocess.Popen[bytes]] = set()
_live_lock = threading.Lock()


@dataclass
class AgentEnvironment:
    """Where the job's proxy listens and what the agent is told."""

    proxy_url: str
    session: str
    case_file: str
    model: str
    provider: str
    api_key: str | None = None
    """A key for the agent when the environment has none (the model client's own, e.g. a placeholder)."""

    def variables(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of the agent process: ``base`` (default: ours) plus the protocol's variables."""
        env = dict(os.environ if base is None else base)
        env.update({
            "ANTHROPIC_BASE_URL": self.proxy_url,
            "OPENAI_BASE_URL": self.proxy_url + "/v1",
            "TRACEKIT_PROXY_URL": self.proxy_url,
            "TRACEKIT_SESSION": self.session,
            "TRACEKIT_CASE_FILE": self.case_file,
            "TRACEKIT_MODEL": self.model,
            "TRACEKIT_PROVIDER": self.provider,
            "PYTHONIOENCODING": env.get("PYTHONIOENCODING", "utf-8"),
        })
        if self.api_key:
            env.setdefault("ANTHROPIC_API_KEY", self.api_key)
            env.setdefault("OPENAI_API_KEY", self.api_key)
        return env


def run_agent_command(command: str, environment: AgentEnvironment, timeout: float, cwd: str | None = None) -> AgentRun:
    """Run the agent command for one job and describe how it ended."""
    began = time.perf_counter()
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        return AgentRun(command=command, exit_status=None, stderr=f"cannot parse the command: {exc}")
    try:
        process = subprocess.Popen(
            argv, env=environment.variables(), cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
    except OSError as exc:
        return AgentRun(command=command, exit_status=None, stderr=f"cannot start the command: {exc}",
                        duration_ms=_ms(began))
    with _live_lock:
        _live.add(process)
    timed_out = False
    try:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
            stdout, stderr = process.communicate()
    finally:
        with _live_lock:
            _live.discard(process)
    return AgentRun.model_validate({
        "command": command,
        "exit_status": None if timed_out else process.returncode,
        "timed_out": timed_out,
        "stderr": _tail(stderr),
        "duration_ms": _ms(began),
        "stdout": _tail(stdout),
    })


def kill_live_agents() -> None:
    """Kill every agent process still running (an interrupted run)."""
    with _live_lock:
        processes = list(_live)
    for process in processes:
        _kill_group(process)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        process.kill()


def _tail(data: bytes | None) -> str:
    if not data:
        return ""
    return data[-TAIL_BYTES:].decode("utf-8", errors="replace")


def _ms(began: float) -> float:
    return round((time.perf_counter() - began) * 1000, 3)
