"""Import tau-bench trajectories (sierra-research/tau-bench ``historical_trajectories/*.json``).

A file is a JSON list of ``{task_id, trial, reward, info, traj}``; ``traj`` is an OpenAI chat message
list. Facts of the format (from the file and its README): a tool error is a result whose content starts
with ``Error:`` (there is no ``is_error`` flag); tool-call ids repeat inside some trajectories, so a
result is paired with the calls of the assistant turn before it by position, not by id.

One trace per trajectory, ``trace_id`` ``tau-bench-<domain>-task<task_id>-trial<trial>``, with
``task_id``, ``trial``, ``reward``, ``domain`` and the original ``info`` (task, ground-truth actions)
in the header's ``meta``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tracekit.importers.common import ImportedTrace, build_trace, fail, new_header, read_json, type_name
from tracekit.importers.openai_messages import check_chat_message
from tracekit.providers import openai
from tracekit.trace import AssistantMessage, ToolCall, ToolResult, content_text

SOURCE = "import:tau-bench"
ERROR_PREFIX = "Error:"
DOMAINS = ("airline", "retail")


def import_tau_bench(path: str | Path, *, domain: str | None = None) -> list[ImportedTrace]:
    """Every trajectory of a tau-bench file as a trace."""
    entries = read_tau_bench(path)
    return list(iter_tau_bench(path, entries, domain=domain))


def iter_tau_bench(
    path: str | Path, entries: list[dict[str, Any]], *, domain: str | None = None
) -> Iterator[ImportedTrace]:
    """Traces of already checked ``entries`` (from ``read_tau_bench``), one at a time."""
    domain = domain or guess_domain(path)
    model = guess_model(path, domain)
    for entry in entries:
        yield trajectory_trace(entry, domain=domain, model=model)


def read_tau_bench(path: str | Path) -> list[dict[str, Any]]:
    """The checked trajectories of a file; ``ImportFormatError`` naming the position otherwise."""
    data = read_json(path)
    if not isinstance(data, list):
        raise fail(path, "", f"expected a list of trajectories, got {type_name(data)}")
    for index, entry in enumerate(data):
        where = f"[{index}]"
        if not isinstance(entry, dict):
            raise fail(path, where, f"expected a trajectory object, got {type_name(entry)}")
        for key in ("task_id", "trial"):
            if not isinstance(entry.get(key), int) or isinstance(entry.get(key), bool):
                raise fail(path, f"{where}.{key}", f"expected an integer, got {type_name(entry.get(key))}")
        if not isinstance(entry.get("traj"), list):
            raise fail(path, f"{where}.traj", f"expected a list of chat messages, got {type_name(entry.get('traj'))}")
        for position, message in enumerate(entry["traj"]):
            check_chat_message(path, f"{where}.traj[{position}]", message)
    return data


def trajectory_trace(entry: dict[str, Any], *, domain: str, model: str | None = None) -> ImportedTrace:
    """One trajectory as a trace: errors marked by their ``Error:`` prefix, results paired by position."""
    trace_id = f"tau-bench-{domain}-task{entry['task_id']}-trial{entry['trial']}"
    meta = {"task_id": entry["task_id"], "trial": entry["trial"], "reward": entry.get("reward"), "domain": domain}
    if "info" in entry:
        meta["info"] = entry["info"]
    header = new_header(trace_id, SOURCE, provider="openai", model=model, meta=meta)
    system, messages = openai.request_conversation({"messages": entry["traj"]})
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result" and content_text(block.get("content")).startswith(ERROR_PREFIX):
                block["is_error"] = True
    trace = build_trace(header, messages, system)
    pair_results_by_position(trace.records)
    return trace


def pair_results_by_position(records: list[Any]) -> None:
    """Point each tool result at the next unanswered call of the latest assistant turn, ignoring ids."""
    waiting: list[ToolCall] = []
    for record in records:
        if isinstance(record, AssistantMessage):
            waiting = []
        elif isinstance(record, ToolCall):
            waiting.append(record)
        elif isinstance(record, ToolResult):
            call = waiting.pop(0) if waiting else None
            record.call_index = call.index if call else None
            record.name = call.name if call else record.name


def guess_domain(path: str | Path) -> str:
    """The tau-bench domain named in the file name (``gpt-4o-airline.json`` -> ``airline``)."""
    stem = Path(path).stem.lower()
    return next((domain for domain in DOMAINS if domain in stem), "unknown")


def guess_model(path: str | Path, domain: str) -> str | None:
    """The model named before the domain in the file name (``gpt-4o-airline.json`` -> ``gpt-4o``)."""
    stem = Path(path).stem
    suffix = f"-{domain}"
    return stem[: -len(suffix)] or None if stem.lower().endswith(suffix) else None
