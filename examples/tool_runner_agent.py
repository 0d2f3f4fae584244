"""An external agent for `tracekit run --agent-cmd`, written on the anthropic SDK's tool runner.

It knows nothing about tracekit beyond the protocol in docs/external-agents.md:

- `ANTHROPIC_BASE_URL` points the SDK at the job's tracekit proxy (the SDK reads it by itself);
- `TRACEKIT_SESSION` is sent as the `x-tracekit-session` header, so every request of this run lands in
  one trace;
- `TRACEKIT_CASE_FILE` is a JSON file with the system prompt, the input messages, the tool schemas and
  each tool's deterministic mock responses; `TRACEKIT_MODEL` is the model to ask for.

The tools are built from the case's JSON schemas with `beta_tool(..., input_schema=...)` and answer from
the mocks; `client.beta.messages.tool_runner(...)` runs the loop (request, run tools, send results) until
the model ends its turn. A failing mock raises `ToolError`, which the runner sends as an `is_error` result.
Failures the case injects (tool intercepts) are applied by the proxy on the way to the model: this agent
never sees them, the model does, and the trace records them.

Run it through tracekit, offline, with the scripted reference policy:

    tracekit run B2-TS C4-LD --model scripted:reference --out runs/tool-runner \\
        --agent-cmd "python examples/tool_runner_agent.py"

or against a real model (the proxy forwards ANTHROPIC_API_KEY):

    tracekit run B2-TS --model claude-sonnet-4-5 --out runs/sonnet \\
        --agent-cmd "python examples/tool_runner_agent.py"
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from typing import Any

import anthropic
from anthropic import beta_tool
from anthropic.lib.tools import ToolError

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values (what a mock's params_match compares)."""
    return json.dumps(a, sort_keys=True, ensure_ascii=False) == json.dumps(b, sort_keys=True, ensure_ascii=False)


def answer_from_mocks(name: str, mocks: list[dict[str, Any]], arguments: dict[str, Any]) -> str:
    """The first mock whose params_match the arguments contain (a mock without one matches anything), with
    `{{param}}` placeholders filled in; ToolError when no mock answers or the mock is an error."""
    for mock in mocks:
        wanted = mock.get("params_match") or {}
        if all(key in arguments and same_json(arguments[key], value) for key, value in wanted.items()):
            def fill(match: re.Match[str]) -> str:
                value = arguments.get(match[1], "")
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                return json.dumps(text, ensure_ascii=False)[1:-1]

            content = PLACEHOLDER.sub(fill, mock["content"])
            if mock.get("is_error"):
                raise ToolError(content)
            return content
    raise ToolError(f"Error: {name} has no result for {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}")


def make_tool(spec: dict[str, Any]) -> Any:
    """A tool-runner tool with the case's name, description and JSON schema, answering from its mocks."""
    name, mocks = spec["name"], spec.get("mocks") or []

    def run(**arguments: Any) -> str:
        return answer_from_mocks(name, mocks, arguments)

    function: Callable[..., str] = run
    return beta_tool(function, name=name, description=spec.get("description") or name,
                     input_schema=spec["input_schema"])


def main() -> int:
    with open(os.environ["TRACEKIT_CASE_FILE"], encoding="utf-8") as handle:
        case = json.load(handle)
    model = os.environ.get("TRACEKIT_MODEL") or case["model"]
    session = os.environ.get("TRACEKIT_SESSION") or case["session"]
    # ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY come from the environment, as with any SDK program.
    client = anthropic.Anthropic(default_headers={"x-tracekit-session": session})
    limits = case.get("limits") or {}
    runner = client.beta.messages.tool_runner(
        model=model,
        max_tokens=limits.get("max_tokens", 2048),
        system=case["system"],
        messages=case["messages"],
        tools=[make_tool(spec) for spec in case["tools"]],
        max_iterations=limits.get("max_turns", 25),
    )
    final = runner.until_done()
    text = "".join(block.text for block in final.content if block.type == "text")
    print(text)
    print(f"stop_reason={final.stop_reason}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
