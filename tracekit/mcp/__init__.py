"""The tool side of an agent session: record, replay and intercept MCP tool servers.

- ``ToolSideRecorder``: JSON-RPC messages in, trace records out (``tool_call``/``tool_result`` with
  ``side: "tool"`` and timing, ``mcp_exchange`` for every exchange, ``intercept`` for each injection).
- ``record_stdio`` / ``replay_stdio``: the stdio wrapper and the stdio replay.
- ``ReplayIndex`` / ``Responder``: answers from recordings, a miss naming the nearest recorded call.
- ``ToolFault`` / ``ToolPolicy``: a case's intercepts and transport faults applied to ``tools/call``.
"""

from tracekit.mcp.faults import ToolFault, ToolPolicy
from tracekit.mcp.recorder import SOURCE, Decision, ToolSideRecorder
from tracekit.mcp.replay import ReplayIndex, Responder
from tracekit.mcp.stdio import record_stdio, replay_stdio

__all__ = [
    "SOURCE",
    "Decision",
    "ReplayIndex",
    "Responder",
    "ToolFault",
    "ToolPolicy",
    "ToolSideRecorder",
    "record_stdio",
    "replay_stdio",
]
