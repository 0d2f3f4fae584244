"""One trace per agent session, both sides: the tool side (``tracekit mcp record``) joined to the model side
(``tracekit record``) that caused it.

The join happens at write time, after the session, with ``tracekit mcp join DIR`` (``join_folder``): the
analyzers read each trace file on its own (in worker processes, on Ray), so a session must be one file
before analysis; and the model proxy owns its files while it records, so nothing else may rewrite them then.
For each tool-side trace in DIR the model-side trace whose tool calls it answers is found (same ``--session``
when the tool side was given one, otherwise the trace with the most tool calls of equal name and canonical
arguments), and written again, atomically, with:

- every ``mcp_exchange`` of the tool side in time order among the model's records; a ``tools/call`` exchange
  names the model's tool call it answered in ``call_index`` (by tool name, canonical arguments and time: the
  first unanswered call of the model with the same name and arguments issued before the tool call started);
- the model's ``tool_call`` given ``mcp_call``: the index of the tool-side call (as in the tool-side trace);
- the tool side's ``intercept`` records (injections at the tool layer) with ``call_index`` moved the same way.

The tool side's own ``tool_call``/``tool_result`` records are not copied (the model's are the calls of the
session; the exchange holds what the tool server really did, and how long it took). The tool-side file is
kept, renamed ``*.jsonl.joined`` so that analysis sees the session once; ``tracekit mcp replay`` reads both.
Without a model side, a tool-side trace stands alone and is analyzed as it is.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracekit.mcp.jsonrpc import canonical_arguments
from tracekit.mcp.recorder import SOURCE
from tracekit.trace.io import trace_files, write_trace
from tracekit.trace.view import Trace, load_trace

JOINED_SUFFIX = ".joined"


@dataclass(frozen=True)
class Joined:
    """One join done: which files, how many tool calls matched."""

    model: Path
    tool: Path
    matched: int
    tool_calls: int


def match_calls(model: Trace, tool: Trace) -> dict[int, int]:
    """Tool-side call index -> model-side call index, by tool name, canonical arguments and time."""
    waiting: dict[tuple[str, bytes], list[Any]] = defaultdict(list)
    for call in model.kind("tool_call"):
        if call.side != "tool":
            waiting[(call.name, canonical_arguments(call.input))].append(call)
    pairs: dict[int, int] = {}
    for call in tool.kind("tool_call"):
        candidates = waiting.get((call.name, canonical_arguments(call.input)), [])
        for position, asked in enumerate(candidates):
            if asked.t is None or call.t is None or asked.t <= call.t:
                pairs[call.index] = asked.index
                del candidates[position]
                break
    return pairs


def joined_records(model: Trace, tool: Trace, pairs: dict[int, int]) -> list[Any]:
    """The model trace's records with the tool side's exchanges and injections merged in, in time order."""
    model_of = {model_index: tool_index for tool_index, model_index in pairs.items()}
    header = model.header.model_copy(deep=True)
    header.meta = {**header.meta, "tool_side": [*header.meta.get("tool_side", []), tool.trace_id]}
    ours = []
    for record in model.records:
        if record.kind == "tool_call" and record.index in model_of:
            record = record.model_copy(update={"mcp_call": model_of[record.index]})
        ours.append(record)
    theirs = []
    for record in tool.records:
        if record.kind in ("mcp_exchange", "intercept"):
            index = record.call_index
            moved = {"call_index": pairs.get(index) if index is not None else None}
            if record.kind == "mcp_exchange":
                moved["mcp_call"] = index
            theirs.append(record.model_copy(update=moved))
    return [header, *_merge(ours, theirs)]


def _merge(ours: list[Any], theirs: list[Any]) -> list[Any]:
    """Both lists in one time order; a record without a time keeps its place after the one before it."""
    merged: list[Any] = []
    j = 0
    clock = float("-inf")
    for record in ours:
        clock = record.t if record.t is not None else clock
        while j < len(theirs) and (theirs[j].t or float("-inf")) < clock:
            merged.append(theirs[j])
            j += 1
        merged.append(record)
    merged.extend(theirs[j:])
    return merged


def join_folder(folder: Path) -> list[Joined]:
    """Join every tool-side trace in ``folder`` to the model-side trace it belongs to (see the module docstring)."""
    traces = [load_trace(path) for path in trace_files([folder])]
    tool_side = [trace for trace in traces if trace.header.source == SOURCE]
    model_side = [trace for trace in traces if trace.header.source != SOURCE]
    done: list[Joined] = []
    for tool in tool_side:
        best: tuple[int, Trace, dict[int, int]] | None = None
        for model in model_side:
            if tool.header.session and model.header.session and tool.header.session != model.header.session:
                continue
            pairs = match_calls(model, tool)
            if pairs and (best is None or len(pairs) > best[0]):
                best = (len(pairs), model, pairs)
        if best is None:
            continue
        _, model, pairs = best
        records = joined_records(model, tool, pairs)
        model_path, tool_path = Path(str(model.path)), Path(str(tool.path))
        scratch = model_path.with_name(model_path.name + ".joining")
        write_trace(scratch, records)
        os.replace(scratch, model_path)
        os.replace(tool_path, tool_path.with_name(tool_path.name + JOINED_SUFFIX))
        index = model_side.index(model)
        model_side[index] = load_trace(model_path)  # a second tool server of the session joins the joined trace
        done.append(Joined(model_path, tool_path, len(pairs), len(tool.kind("tool_call"))))
    return done
