"""``repeated_text``: the agent repeating itself in words rather than in calls.

Two rules, each from a peer (``docs/detectors.md``):

- whole messages: the agent sends the same message (text, no tool call) ``message_repeats`` times in a
  row with no tool result between them (OpenHands' "monologue", ``openhands/controller/stuck.py``);
- chunks: one ``chunk_size``-character stretch of the agent's text comes back ``chunk_repeats`` times
  close together, the average gap at most ``chunk_spread`` chunks (Gemini CLI's content loop,
  ``packages/core/src/services/loopDetectionService.ts``). The text is followed from one tool call or
  user turn to the next, across consecutive agent messages; code blocks are skipped, and Markdown
  structure (a table row, list item, heading, quote or divider line) starts the count afresh, since
  repeated structure is not a loop.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from tracekit.analyze.detectors.registry import DetectorContext, Finding, detector

_FENCE = "```"
_STRUCTURE = re.compile(r"\s*(\|.*\||[|+-]{3,}|[*+-]\s|\d+\.\s|#+\s|>\s)")
_DIVIDER = re.compile(r"[\s*+\-_=~#\u2500-\u257f]+")


@detector(
    "repeated_text", message_repeats=3, chunk_size=50, chunk_repeats=0, chunk_spread=5, reset_on_user_message=True
)
def repeated_text(context: DetectorContext) -> list[Finding]:
    """The agent sending the same message ``message_repeats`` times with no tool result between, or repeating
    a ``chunk_size``-character chunk of its text ``chunk_repeats`` times close together.

    Options: ``message_repeats`` (0: off), ``chunk_size``, ``chunk_repeats`` (0: off), ``chunk_spread``
    (the largest average gap between the repeats, in chunks), ``reset_on_user_message`` (a user message
    between two identical messages means the agent was answering, not repeating itself; the chunk rule
    always starts afresh at a user turn).
    """
    if context.trace is None:
        return []
    options = context.options
    findings = []
    if int(options["message_repeats"]) > 0:
        findings.extend(_repeated_messages(context, int(options["message_repeats"])))
    if int(options["chunk_repeats"]) > 0:
        findings.extend(_content_loops(context, options))
    return findings


def _repeated_messages(context: DetectorContext, repeats: int) -> list[Finding]:
    assert context.trace is not None
    reset = bool(context.options.get("reset_on_user_message"))
    # A run is made of the agent's messages without a tool call: too few of them (counted without
    # reading their blocks first) for one, and there is none.
    with_calls = len({record.message_index for record in context.trace.kind("tool_call")})
    if len(context.trace.kind("assistant_message")) - with_calls < repeats or len(context.agent_text_turns) < repeats:
        return []
    agent_messages = set(context.agent_text_turns)
    findings: list[Finding] = []
    run: list[tuple[int, str]] = []

    def close() -> None:
        if len(run) >= repeats and any(index >= context.history_messages for index, _ in run):
            text = run[0][1]
            shown = text if len(text) <= 80 else text[:79] + "…"
            findings.append(
                Finding(
                    kind="repeated_text",
                    severity="error",
                    calls=[],
                    messages=[index for index, _ in run],
                    message=(
                        f"The agent sent the same message {len(run)} times in a row with no tool result between "
                        f"({shown!r}); it is talking to itself: act on the plan, ask the user, or stop."
                    ),
                )
            )
        run.clear()

    for record in context.trace.records:
        kind = record.kind
        if kind == "assistant_message" and record.message_index in agent_messages:
            text = _text(record.content).strip()
            if run and text != run[0][1]:
                close()
            run.append((record.message_index, text))
        elif kind == "tool_result" or (kind == "user_message" and reset):
            close()
    close()
    return findings


def _content_loops(context: DetectorContext, options: dict[str, Any]) -> list[Finding]:
    assert context.trace is not None
    tracker = _ContentTracker(int(options["chunk_size"]), int(options["chunk_repeats"]), int(options["chunk_spread"]))
    findings: list[Finding] = []
    for record in context.trace.records:
        kind = record.kind
        if kind == "assistant_message":
            for block in record.content:
                kind_of_block = block.get("type")
                if kind_of_block == "text":
                    loop = tracker.add(str(block.get("text", "")), record.message_index)
                    if loop is not None and any(index >= context.history_messages for index in loop.messages):
                        findings.append(loop.finding(int(options["chunk_size"])))
                elif kind_of_block in ("tool_use", "server_tool_use"):
                    tracker.reset()
            tracker.end_message()
        elif kind in ("user_message", "tool_result"):
            tracker.reset()
    return findings


@dataclass
class _Loop:
    chunk: str
    times: int
    messages: list[int]

    def finding(self, chunk_size: int) -> Finding:
        return Finding(
            kind="repeated_text",
            severity="error",
            calls=[],
            messages=self.messages,
            message=(
                f"The agent's text repeated the same {chunk_size} characters {self.times} times close together "
                f"({self.chunk.strip()!r}); it is stuck in a loop of words: stop and answer, or change course."
            ),
        )


@dataclass
class _ContentTracker:
    """The agent's text since the last tool call or user turn, checked chunk by chunk as it grows."""

    chunk_size: int
    repeats: int
    spread: int
    text: str = ""
    position: int = 0
    seen: dict[str, list[int]] = field(default_factory=dict)
    owners: list[tuple[int, int]] = field(default_factory=list)
    """(offset in ``text``, message_index) where each message's text begins."""
    in_code: bool = False
    detected: bool = False
    pending_break: bool = False

    def reset(self) -> None:
        """A tool call or a user turn: the count starts afresh."""
        self._clear()
        self.in_code = False
        self.detected = False
        self.pending_break = False

    def end_message(self) -> None:
        """The message is over: the next one (if nothing resets first) continues on a new line."""
        self.pending_break = bool(self.text)

    def add(self, text: str, message_index: int) -> _Loop | None:
        """Follow a text block of message ``message_index``; the loop, the first time one is found."""
        if self.detected:
            return None
        for line in text.splitlines(keepends=True):
            loop = self._add_line(line, message_index)
            if loop is not None:
                self.detected = True
                return loop
        return None

    def _add_line(self, line: str, message_index: int) -> _Loop | None:
        if _FENCE in line:
            parts = line.split(_FENCE)
            loop = None if self.in_code else self._track(parts[0], message_index)
            for part in parts[1:]:
                self._clear()
                self.in_code = not self.in_code
                if not self.in_code and loop is None:
                    loop = self._track(part, message_index)
            return loop
        if self.in_code:
            return None
        bare = line.strip()
        if bare and _DIVIDER.fullmatch(bare):
            self._clear()
            return None
        if _STRUCTURE.match(line):
            self._clear()
        return self._track(line, message_index)

    def _track(self, text: str, message_index: int) -> _Loop | None:
        if not text:
            return None
        if self.pending_break:
            self.text += "\n"
            self.pending_break = False
        if not self.owners or self.owners[-1][1] != message_index:
            self.owners.append((len(self.text), message_index))
        self.text += text
        size = self.chunk_size
        while self.position + size <= len(self.text):
            loop = self._check(self.text[self.position : self.position + size])
            if loop is not None:
                return loop
            self.position += 1
        return None

    def _check(self, chunk: str) -> _Loop | None:
        places = self.seen.setdefault(chunk, [])
        places.append(self.position)
        if len(places) < self.repeats:
            return None
        recent = places[-self.repeats :]
        if (recent[-1] - recent[0]) / max(1, self.repeats - 1) > self.chunk_size * self.spread:
            return None
        # Repeats of a shared prefix (a list of distinct items) have distinct gaps; a loop has one or two.
        gaps = {self.text[a:b] for a, b in itertools.pairwise(recent)}
        if len(gaps) > self.repeats // 2:
            return None
        messages = [index for start, index in self.owners if start < recent[-1] + self.chunk_size]
        first = max((i for i, (start, _) in enumerate(self.owners) if start <= recent[0]), default=0)
        return _Loop(chunk, self.repeats, messages[first:])

    def _clear(self) -> None:
        self.text = ""
        self.position = 0
        self.seen = {}
        self.owners = []


def _text(content: list[dict[str, Any]]) -> str:
    return "".join(str(block.get("text", "")) for block in content if block.get("type") == "text")
