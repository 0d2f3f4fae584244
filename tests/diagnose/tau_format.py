"""Traces in the real tau-bench trajectory format (``historical_trajectories/*.json``: OpenAI chat messages,
tool errors as ``Error:`` results), made by tracekit's own tau-bench importer, for the diagnosis tests.

    trace = tau_trace(user("cancel ZFA04Y"), *tool("get_reservation_details", {...}, {...}), say("Done."))
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from tracekit.importers.tau_bench import trajectory_trace
from tracekit.trace import Trace

_ids = itertools.count(1)


def user(text: str) -> dict[str, Any]:
    """A user message."""
    return {"role": "user", "content": text}


def say(text: str) -> dict[str, Any]:
    """An assistant message with text only."""
    return {"role": "assistant", "content": text}


def tool(
    name: str, arguments: dict[str, Any], result: Any, *, also: tuple[tuple[str, dict[str, Any], Any], ...] = ()
) -> list[dict[str, Any]]:
    """An assistant message calling ``name`` (and the ``also`` calls in the same message), then each result."""
    calls = [(name, arguments, result), *also]
    ids = [f"call_{next(_ids)}" for _ in calls]
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, (n, a, _) in zip(ids, calls, strict=True)]}  # fmt: skip
    results = [{"role": "tool", "tool_call_id": i, "name": n, "content": r if isinstance(r, str) else json.dumps(r)}
               for i, (n, _, r) in zip(ids, calls, strict=True)]  # fmt: skip
    return [message, *results]


def tau_trace(
    *messages: dict[str, Any] | list[dict[str, Any]], reward: float = 0.0, info: dict[str, Any] | None = None
) -> Trace:
    """A trace of one tau-bench trajectory made of ``messages`` (lists from ``tool`` are spliced in); ``info``
    as tau-bench writes it (``{"task": {"actions": [{"name", "kwargs"}], "outputs": [...]}}``)."""
    traj: list[dict[str, Any]] = [{"role": "system", "content": "# Airline Agent Policy"}]
    for message in messages:
        traj.extend(message if isinstance(message, list) else [message])
    entry: dict[str, Any] = {"task_id": 1, "trial": 0, "reward": reward, "traj": traj}
    if info is not None:
        entry["info"] = info
    imported = trajectory_trace(entry, domain="airline")
    return Trace(header=imported.records[0], records=imported.records[1:])
