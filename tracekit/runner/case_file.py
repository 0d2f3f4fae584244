"""``TRACEKIT_CASE_FILE``: what an external agent is told about the case it runs (docs/external-agents.md).

A JSON object (UTF-8, Chinese as is)::

    {"tracekit_case_file": 1,
     "case_id": "CASE-01", "group": "A", "repeat": 0, "session": "CASE-01__A__r0",
     "model": "claude-...", "provider": "anthropic",
     "system": "<system prompt: context, skills>",
     "messages": [<Anthropic messages: history, then the user message with base64 images>],
     "context": {"now": "2026-04-07", "location": null, "notes": null},
     "skills": ["flight_booking_skill"],
     "tools": [{"name": ..., "description": ..., "input_schema": {...},
                "mocks": [{"params_match": {...} | null, "content": "...", "is_error": false}]}],
     "simulated_user": {"persona": ..., "max_turns": 20, "replies": [...]} | null,
     "limits": {"max_turns": 25, "max_tokens": 2048}}

Mocks answer a call the way the runner's own executor does: the first mock whose ``params_match`` pairs
all occur (equal as JSON) in the call's input, else the first mock without ``params_match``; ``{{name}}``
in the content is replaced by the call's ``name`` argument (JSON-string escaped); no mock: an error
result. The case's intercepts are not in the file: the proxy applies them, unseen by the agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tracekit.output import write_json
from tracekit.runner.agent import AgentLimits
from tracekit.runner.conversation import AgentStart
from tracekit.runner.jobs import Job
from tracekit.runner.mock_tools import MockToolExecutor

CASE_FILE_VERSION = 1


def case_file_document(
    job: Job, start: AgentStart, tools: MockToolExecutor, *, model: str, provider: str, limits: AgentLimits
) -> dict[str, Any]:
    """The case file's content for one job."""
    case = job.case
    context = case.context
    simulated = case.input.simulated_user
    return {
        "tracekit_case_file": CASE_FILE_VERSION,
        "case_id": case.id,
        "title": case.title,
        "group": job.group,
        "repeat": job.repeat,
        "session": job.name,
        "model": model,
        "provider": provider,
        "system": start.system,
        "messages": start.messages,
        "context": {"now": context.now.isoformat() if context.now else None, "location": context.location,
                    "notes": context.notes},
        "skills": start.skills,
        "tools": [
            {**spec.as_tool_param(),
             "mocks": [mock.model_dump(mode="json") for mock in spec.mocks]}
            for spec in tools.specs.values()
        ],
        "simulated_user": simulated.model_dump(mode="json") if simulated is not None else None,
        "limits": {"max_turns": limits.max_turns, "max_tokens": limits.max_tokens},
    }


def write_case_file(path: Path, document: dict[str, Any]) -> Path:
    """Write the case file (through the redactor, like every file tracekit writes)."""
    return write_json(path, document)
