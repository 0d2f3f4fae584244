"""Failure recovery: what the agent did after a tool call failed.

A failure is an error result, or an injected failing result of the case's ``recovery.failing_tool``
(an intercept may inject an empty result that is not flagged as an error, e.g. "未找到相关商品").
A failure episode is a run of failures of one tool with no success of that tool in between. After the
episode's last failure the agent may

- ``retry``: call the same tool again with changed arguments (an identical call counts only when it
  succeeds: a transient failure such as a timeout),
- ``fallback``: call another tool,
- ``ask_user``: ask the user for what is missing,
- ``explain``: tell the user what failed and offer an alternative (only a judge can tell; the answer
  merely mentioning the failure is noted as a hint).

The case check (``recovery``) accepts the modes the case lists in ``recovery.accept``. Seed 003's
recovery rate counts an episode as recovered when a later call succeeded (cases/traps/SCORING.md); one
that asked the user, or tried again and then told the user what failed, is ``handled`` (the seed's Q3:
"重试至少一次，然后告知用户失败原因"). The agent "has a recovery mechanism" when any call follows a
failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tracekit.analyze import counts
from tracekit.analyze.selection import tool_tier
from tracekit.analyze.values import parse_result
from tracekit.cases import ToolIntercept, ToolMock
from tracekit.trace import content_text

if TYPE_CHECKING:
    from tracekit.analyze.binding import CaseRun
    from tracekit.analyze.graph import CallNode

#: Result texts that report an error without the is_error flag (seed 003's ``_check_semantic_params``).
ERROR_PREFIXES = ("[错误]", "错误:", "错误：")

#: Words with which an answer tells the user that something failed or is unavailable.
REPORTS_FAILURE = re.compile(
    r"失败|无法|错误|不可用|暂时|没有找到|未找到|查不到|搜不到|故障|超时|error|fail|unavailable|timeout", re.I
)


@dataclass
class Episode:
    """Consecutive failures of one tool and what the agent did afterwards."""

    tool: str
    failures: list[int] = field(default_factory=list)
    actions: dict[str, list[int]] = field(default_factory=dict)
    """Recovery modes observed after the last failure -> the calls (or message indexes for ask_user)."""
    succeeded_by: int | None = None
    """A later call that succeeded, if any."""
    reported: bool = False
    """The final answer mentions a failure (a hint for ``explain``; the judge decides)."""

    @property
    def attempted(self) -> bool:
        """Whether the agent tried again (a retry or a fallback), counting repeats within the episode."""
        return len(self.failures) > 1 or "retry" in self.actions or "fallback" in self.actions

    @property
    def recovered(self) -> bool:
        """Seed 003's recovery rate counts an episode as recovered when a later call succeeded."""
        return self.succeeded_by is not None

    @property
    def handled(self) -> bool:
        """Recovered, or asked the user, or tried again and told the user (seed 003's Q3: "重试至少一次，
        然后告知用户失败原因")."""
        return self.recovered or "ask_user" in self.actions or (self.attempted and self.reported)

    def accepted(self, modes: list[str]) -> list[str]:
        """The observed modes among ``modes``."""
        return [mode for mode in modes if mode in self.actions]

    def describe(self) -> str:
        """One line of evidence."""
        calls = ", ".join(f"#{index}" for index in self.failures)
        done = [f"{mode} ({', '.join(f'#{i}' for i in where)})" for mode, where in self.actions.items()]
        if self.succeeded_by is not None:
            done.append(f"call #{self.succeeded_by} succeeded")
        if self.reported:
            done.append("the answer reports the failure")
        return f"{self.tool} failed ({calls}); then: {', '.join(done) if done else 'nothing after the last failure'}"


def is_failure(run: CaseRun, node: CallNode) -> bool:
    """An error result (flagged, empty, or starting with 「[错误]」 / 「错误:」), or an injected failing
    result of the case's failing tool."""
    if not node.has_result:
        return False
    text = node.result_text.strip()
    if node.is_error or not text or text.startswith(ERROR_PREFIXES):
        return True
    recovery = run.case.expect.recovery
    if recovery is None or recovery.failing_tool != node.tool:
        return False
    return text in _injected_texts(run, node.tool)


def recovery_episodes(run: CaseRun, tool: str | None = None) -> list[Episode]:
    """The failure episodes after the history (optionally of one tool), each with what followed."""
    judged = run.judged
    episodes: list[Episode] = []
    open_episode: dict[str, Episode] = {}
    for node in judged:
        if is_failure(run, node):
            episode = open_episode.get(node.tool)
            if episode is None:
                episode = open_episode[node.tool] = Episode(node.tool)
                episodes.append(episode)
            episode.failures.append(node.index)
        elif node.succeeded:
            open_episode.pop(node.tool, None)
    if tool is not None:
        episodes = [episode for episode in episodes if episode.tool == tool]
    questions = counts.questions(run.trace, run.history_messages)
    reported = REPORTS_FAILURE.search(run.final_answer) is not None
    for episode in episodes:
        last = run.graph.node(episode.failures[-1])
        for node in judged:
            if not last.returned_before(node):
                continue
            if node.tool != episode.tool:
                episode.actions.setdefault("fallback", []).append(node.index)
            elif node.key != last.key or node.succeeded:
                episode.actions.setdefault("retry", []).append(node.index)
            if node.succeeded and episode.succeeded_by is None and _can_stand_in(run, episode.tool, node.tool):
                episode.succeeded_by = node.index
        asked = [message.message_index for message in questions if message.message_index > last.result_turn_or_turn]
        if asked:
            episode.actions["ask_user"] = asked
        episode.reported = reported
    return episodes


def _can_stand_in(run: CaseRun, failed: str, tool: str) -> bool:
    """A success of ``tool`` recovers from a failure of ``failed``: the same tool, or a fallback the case
    rates best or acceptable (cases/traps/SCORING.md)."""
    return tool == failed or tool_tier(run, tool)[0] != "wrong"


def has_recovery_mechanism(episodes: list[Episode]) -> bool:
    """Whether the agent ever retried or fell back after a failure."""
    return any(episode.attempted for episode in episodes)


def _injected_texts(run: CaseRun, tool: str) -> set[str]:
    texts = set()
    for intercept in run.case.intercepts:
        if isinstance(intercept, ToolIntercept) and tool in intercept.tools:
            texts.add(content_text(intercept.inject_tool_result.content).strip())
        elif isinstance(intercept, ToolMock):
            for mock in intercept.mocked_calls:
                text = content_text(mock.inject_result.content).strip()
                if mock.tool == tool and (mock.inject_result.is_error or looks_empty(text)):
                    texts.add(text)
    return texts


def looks_empty(text: str) -> bool:
    """A result with nothing in it (``{"total": 0, "items": []}``): a failure to recover from."""
    value = parse_result(text)
    if not isinstance(value, dict):
        return False
    lists = [inner for inner in value.values() if isinstance(inner, list)]
    return value.get("total") == 0 or (bool(lists) and not any(lists))
