"""A loaded trace and the views analysis needs: tool calls paired with their results, stats, answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tracekit.errors import TraceFormatError
from tracekit.results.model import TraceStats
from tracekit.storage import is_url, local
from tracekit.trace.io import ReadProblem, read_records
from tracekit.trace.mirror import read_mirrored
from tracekit.trace.models import Header, ModelCall, ToolCall, ToolResult, block_text

#: The index name of side calls in ``Trace.kind`` (no record kind has it).
SIDE_CALLS = "side_call"


@dataclass(slots=True)
class Call:
    """One tool call with the result the model saw for it (None when the trace ends before it)."""

    call: ToolCall
    result: ToolResult | None
    history: bool = False

    @property
    def index(self) -> int:
        return self.call.index

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def input(self) -> Any:
        return self.call.input

    @property
    def is_error(self) -> bool:
        return self.result.is_error if self.result is not None else False

    @property
    def result_text(self) -> str:
        """The result content as plain text (text blocks joined)."""
        return content_text(self.result.content) if self.result is not None else ""


@dataclass
class Trace:
    """One agent session: its header, its records in order, and any lines that could not be read.

    A loaded trace is read-only: the records are indexed by kind on first use. They are the record models,
    or their read-only mirrors (``load_trace(path, fast=True)``), which have the same fields: tell records
    apart by ``record.kind``.
    """

    header: Header
    records: list[Any]
    path: Path | str | None = None
    """The file it was read from (a URL as a string, ``tracekit.storage``)."""
    problems: list[ReadProblem] = field(default_factory=list)
    _by_kind: dict[str, list[Any]] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def trace_id(self) -> str:
        return self.header.trace_id

    def kind(self, name: str) -> list[Any]:
        """The records whose ``kind`` is ``name`` (e.g. ``"tool_call"``), in order; indexed once.

        These are the conversation's records: a side call (``ModelCall.side_call``, a title or summary request
        beside the conversation) is no turn of it, so ``kind("model_call")`` leaves it out and every analysis
        (stats, detectors, checks, diagnosis) with it; ``side_calls()`` lists them, ``records`` has them all."""
        if self._by_kind is None:
            by_kind: dict[str, list[Any]] = {}
            for record in self.records:
                name_of = SIDE_CALLS if getattr(record, "side_call", None) else record.kind
                bucket = by_kind.get(name_of)
                if bucket is None:
                    by_kind[name_of] = [record]
                else:
                    bucket.append(record)
            self._by_kind = by_kind
        return self._by_kind.get(name, [])

    def side_calls(self) -> list[ModelCall]:
        """The session's side calls (model calls beside the conversation), in order."""
        return self.kind(SIDE_CALLS)

    def of_kind(self, kind: type[BaseModel]) -> list[Any]:
        """The records of one record class, in order."""
        return self.kind(kind.model_fields["kind"].default)

    def calls(self, history_messages: int = 0) -> list[Call]:
        """Tool calls in order, each paired with its result; calls issued within the first
        ``history_messages`` messages are marked ``history``."""
        results: dict[int, ToolResult] = {}
        for result in self.kind("tool_result"):
            if result.call_index is not None:
                results.setdefault(result.call_index, result)
        return [
            Call(call, results.get(call.index), call.message_index < history_messages)
            for call in self.kind("tool_call")
        ]

    def final_answer(self) -> str:
        """Text of the last assistant message (the agent's answer to the user)."""
        for message in reversed(self.kind("assistant_message")):
            text = message.text
            if text:
                return str(text)
        return ""

    def message_count(self) -> int:
        """Number of conversation messages (user, assistant, and tool-result carriers)."""
        kinds = ("user_message", "assistant_message", "tool_call", "tool_result")
        return len({record.message_index for kind in kinds for record in self.kind(kind)})

    def stats(self) -> TraceStats:
        """LLM calls (the assistant messages when no model call was recorded), tool calls, tool errors and token
        totals: ``traces[].stats`` of the analyze JSON."""
        model_calls: list[ModelCall] = self.kind("model_call")
        input_tokens = output_tokens = 0
        for call in model_calls:
            usage = call.usage
            input_tokens += usage.input_tokens or 0
            output_tokens += usage.output_tokens or 0
        return TraceStats.built(
            llm_calls=len(model_calls) or len(self.kind("assistant_message")),
            tool_calls=len(self.kind("tool_call")),
            tool_errors=sum(1 for result in self.kind("tool_result") if result.is_error),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )


def load_trace(path: str | Path, *, fast: bool = False, slim: Callable[[Any], Any] | None = None) -> Trace:
    """Read one trace file. Unreadable lines are kept in ``Trace.problems``, with what the importer that
    made the file could not map (its header's ``meta.problems``); the rest is read.

    ``fast``: read an intact file of the current format into the read-only mirrors of the records
    (``tracekit.trace.mirror``: the same fields, about three times cheaper to read; no pydantic methods,
    no extra fields), for analysis; any other file is read into the models as usual. ``slim`` (with ``fast``):
    what the mirrors keep of each record (``read_mirrored``); a file read into the models keeps them whole.

    Raises ``TraceFormatError`` when the file holds no readable record or a newer format.
    """
    path = path if is_url(path) else Path(local(path))  # a URL stays a string: Path would merge its "//"
    problems: list[ReadProblem] = []
    records = None
    if fast:
        records = read_mirrored(path, slim=slim)
    if records is None:
        records = read_records(path, problems)
    if not records:
        detail = f" ({problems[0].message})" if problems else ""
        raise TraceFormatError(f"{path}: no readable trace record{detail}")
    header, *rest = records
    # What an importer could not map is kept in the header (meta.problems) and reported with the file.
    noted = header.meta.get("problems") if isinstance(header.meta, dict) else None
    problems.extend(ReadProblem(str(path), 1, str(note)) for note in noted or () if isinstance(noted, list))
    return Trace(header=header, records=rest, path=path, problems=problems)


def content_text(content: Any) -> str:
    """Plain text of message or result content (a string, or blocks whose text is joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if "text" in block:
                    parts.append(block_text(block["text"]))
                elif block.get("type") == "tool_result":
                    parts.append(content_text(block.get("content")))
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return "" if content is None else str(content)
