"""The canonical trace: one agent session as a header followed by records in the order they happened.

Records form a pydantic discriminated union on ``kind``. Message content uses the Anthropic content
block shape as the canonical one (``text``, ``tool_use``, ``tool_result``, ``thinking``,
``redacted_thinking``, ``image``, ...), kept as plain dicts so that no field a provider sends is lost.
The OpenAI provider converts to and from it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: The trace format written by this version. Readers upgrade older files through
#: ``tracekit.trace.migrations`` and refuse newer ones.
FORMAT_VERSION = 1

Content = str | list[dict[str, Any]]
"""Message content: a plain string, or a list of content blocks (canonical, Anthropic-shaped)."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")

    t: float | None = Field(default=None, description="Wall-clock time (Unix seconds) when recorded.")


class Usage(BaseModel):
    """Token usage of one model call, as the provider reported it (None when it did not)."""

    model_config = ConfigDict(extra="allow")

    input_tokens: int | None = Field(default=None, description="Prompt tokens (not counting cache reads).")
    output_tokens: int | None = Field(default=None, description="Generated tokens.")
    cache_read_input_tokens: int | None = Field(default=None, description="Prompt tokens read from cache.")
    cache_creation_input_tokens: int | None = Field(
        default=None, description="Prompt tokens written to the cache."
    )


class Header(_Record):
    """The first record of every trace file: identity, provenance and binding to a case."""

    kind: Literal["header"] = "header"
    format: int = Field(default=FORMAT_VERSION, description="Trace format version of this file.")
    trace_id: str = Field(description="Unique id of this trace (one agent session).")
    created: str | None = Field(default=None, description="ISO 8601 creation time.")
    tracekit: str | None = Field(default=None, description="Version of tracekit that wrote the file.")
    source: str | None = Field(
        default=None,
        description="How the trace was made: 'proxy', 'replay', 'import:tau-bench', 'run:reference-agent', "
        "'run:<model>' (a simulated model), ...",
    )
    session: str | None = Field(
        default=None,
        description="The x-tracekit-session header, when given; else the session id the agent's client sent "
        "(Claude Code's, Codex's: meta.session_from names the header or field).",
    )
    provider: str | None = Field(default=None, description="'anthropic' or 'openai' when known.")
    model: str | None = Field(default=None, description="Model name of the first model call, when known.")
    case_id: str | None = Field(default=None, description="Id of the case this trace runs, if any.")
    group: str | None = Field(default=None, description="Skill A/B group ('A' or 'B'), if any.")
    repeat: int | None = Field(default=None, description="Repeat index (0-based) within a run, if any.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Free-form metadata (importer fields).")


class SystemMessage(_Record):
    """The system prompt in effect from this point on."""

    kind: Literal["system_message"] = "system_message"
    content: Content = Field(description="The system prompt (string or text blocks).")


class UserMessage(_Record):
    """A user turn of the conversation (tool results travel as ``tool_result`` records instead)."""

    kind: Literal["user_message"] = "user_message"
    message_index: int = Field(description="Position of this message in the conversation (0-based).")
    content: Content = Field(description="Text and images of the message, tool_result blocks removed.")


class AssistantMessage(_Record):
    """An assistant turn: every content block in order (text, thinking, tool_use, ...)."""

    kind: Literal["assistant_message"] = "assistant_message"
    message_index: int = Field(description="Position of this message in the conversation (0-based).")
    content: list[dict[str, Any]] = Field(description="Canonical content blocks, in the order sent.")
    stop_reason: str | None = Field(default=None, description="Why the model stopped, when known.")
    model_call: int | None = Field(
        default=None, description="Index of the model_call that produced it (None for imported history)."
    )

    @property
    def text(self) -> str:
        """The concatenated text blocks (a text that is not a string, as a hostile or damaged file may hold,
        is shown as its JSON: see ``block_text``)."""
        return "".join(block_text(b.get("text")) for b in self.content if b.get("type") == "text")


def block_text(value: Any) -> str:
    """The ``text`` of a content block as text: a string as it is, a missing one as ``""``, any other JSON
    value (a list, a number, an object) as its JSON, so that one odd block is shown, not fatal."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str)


class ToolCall(_Record):
    """One tool_use the agent issued. Parallel calls of one assistant turn share ``message_index``."""

    kind: Literal["tool_call"] = "tool_call"
    index: int = Field(description="Position among the trace's tool calls (0-based), the id used by findings.")
    id: str | None = Field(default=None, description="Provider tool_use id (may repeat in imported data).")
    name: str = Field(description="Tool name.")
    input: Any = Field(default_factory=dict, description="Parsed arguments (the raw text if not JSON).")
    input_parse_error: bool = Field(default=False, description="True when the arguments were not JSON.")
    message_index: int = Field(description="Position of the assistant message that issued it.")
    model_call: int | None = Field(default=None, description="Index of the model_call that produced it.")
    side: str | None = Field(
        default=None, description="'tool' when an MCP recorder saw the call at the tool server (None: the model side)."
    )
    mcp_call: int | None = Field(
        default=None, description="Model side: ``index`` of the tool-side call (side 'tool') it caused, once joined."
    )


class ToolResult(_Record):
    """The result the model saw for one tool call (after any intercept)."""

    kind: Literal["tool_result"] = "tool_result"
    call_index: int | None = Field(default=None, description="``index`` of the tool_call it answers (None: unpaired).")
    tool_use_id: str | None = Field(default=None, description="Provider tool_use id it answers.")
    name: str | None = Field(default=None, description="Tool name, when known.")
    content: Content = Field(description="Result content as sent to the model.")
    is_error: bool = Field(default=False, description="True when the tool reported a failure.")
    message_index: int = Field(description="Position of the message that carried it.")
    injected: bool = Field(default=False, description="True when an intercept replaced the agent's result.")
    side: str | None = Field(
        default=None, description="'tool' when an MCP recorder saw the result at the tool server (None: model side)."
    )
    latency_ms: float | None = Field(
        default=None, description="Tool side: time from the tools/call request to its answer at the tool server."
    )


class ModelCall(_Record):
    """One request/response exchange with the model API, as the proxy saw it or an importer inferred it."""

    kind: Literal["model_call"] = "model_call"
    index: int = Field(description="Position among the trace's model calls (0-based).")
    provider: str = Field(description="'anthropic' or 'openai'.")
    model: str | None = Field(default=None, description="Model named in the request or response.")
    stream: bool = Field(default=False, description="Whether the client asked for SSE.")
    status: int | None = Field(default=None, description="HTTP status returned to the client.")
    request: dict[str, Any] | None = Field(default=None, description="Request body (redacted, parsed).")
    request_raw: str | None = Field(default=None, description="Request body text when it was not JSON.")
    request_key: str | None = Field(default=None, description="Canonical hash used to match in replay.")
    response: dict[str, Any] | None = Field(
        default=None, description="Response body in the provider's JSON shape (assembled from SSE if streamed)."
    )
    sse: str | None = Field(default=None, description="The SSE text exactly as received (redacted).")
    event_offsets_ms: list[float] | None = Field(
        default=None, description="Arrival time of each SSE event, ms after the request was sent."
    )
    usage: Usage = Field(default_factory=Usage, description="Token usage reported by the provider.")
    stop_reason: str | None = Field(default=None, description="Provider stop/finish reason.")
    latency_ms: float | None = Field(default=None, description="Time from request to last byte.")
    ttft_ms: float | None = Field(default=None, description="Time from request to first response byte.")
    attempts: int = Field(default=1, description="HTTP attempts of this turn (SDK retries included).")
    partial: bool = Field(default=False, description="True when the client or upstream cut the exchange.")
    error: dict[str, Any] | None = Field(default=None, description="Provider error body or transport error.")
    # Written by the proxy (absent in imported traces); in the order the proxy writes them.
    response_headers: dict[str, str] | None = Field(
        default=None, description="Response headers kept for replay (content type, retry hints, request ids)."
    )
    stitched: str | None = Field(
        default=None,
        description="How the request was joined to its session: header, thread, conversation, retry, continuity, new.",
    )
    fault: bool | None = Field(default=None, description="True when an http_error fault made the answer.")
    replay_miss: bool | None = Field(default=None, description="True when the answer is the proxy's replay-miss error.")
    replayed: bool | None = Field(default=None, description="True when a recording answered (replay).")
    websocket: bool | None = Field(
        default=None,
        description="True when the request came as a response.create event on a Responses API WebSocket; its "
        "frames are kept in sse as the HTTP stream would carry them.",
    )
    transport: str | None = Field(
        default=None,
        description="Transport failure: connect, connect_timeout, read_timeout, reset, cut, fault_cut, cancelled.",
    )
    request_parse_error: str | None = Field(default=None, description="Why the request body is not a JSON object.")
    from_attempts: bool | None = Field(
        default=None, description="True when the call sums up failed attempts written before it as error records."
    )
    response_raw: str | None = Field(
        default=None, description="The response body as it came when it is not a JSON object (redacted)."
    )
    response_parse_error: str | None = Field(default=None, description="Why the response body is not a JSON object.")
    escaped: list[str] | None = Field(
        default=None,
        description="Fields (sse, request_raw, response_raw) holding bytes that are not UTF-8: backslashes doubled, "
        "each other byte written as \\xNN.",
    )
    side_call: bool | None = Field(
        default=None,
        description="True for a side call of the session: a request beside the conversation (a title or summary "
        "call sharing the client's session id) that joins its trace but is no turn of it; analysis leaves it out.",
    )
    shared_texts: list[str] | None = Field(
        default=None,
        description="SHA-256 of the long texts that request or response name instead of repeating them: "
        "'tracekit:shared-text:sha256=<hex>' stands for the text the trace's conversation records hold.",
    )


class Intercept(_Record):
    """A tool result the proxy replaced before the model saw it, or a transport fault it injected."""

    kind: Literal["intercept"] = "intercept"
    mode: str = Field(description="'tool_intercept', 'tool_mock' or 'fault'.")
    tool: str | None = Field(default=None, description="Tool whose result was replaced.")
    tool_use_id: str | None = Field(default=None, description="tool_use id whose result was replaced.")
    call_index: int | None = Field(default=None, description="``index`` of the affected tool_call.")
    original: Any = Field(default=None, description="What the agent's tool returned.")
    injected: Any = Field(default=None, description="What the model saw instead.")
    is_error: bool | None = Field(default=None, description="is_error flag of the injected result.")
    model_call: int | None = Field(default=None, description="model_call the injection was applied to.")


class ErrorRecord(_Record):
    """Something that went wrong outside the conversation: upstream, transport, agent process, reader."""

    kind: Literal["error"] = "error"
    source: str = Field(description="'upstream', 'transport', 'client', 'agent' or 'proxy'.")
    message: str = Field(description="What happened, in a sentence.")
    status: int | None = Field(default=None, description="HTTP status, when there was one.")
    body: Any = Field(default=None, description="Error body as received (redacted).")
    model_call: int | None = Field(default=None, description="model_call it belongs to, if any.")
    # A failed attempt the SDK retried (written by the proxy, replayed as it happened).
    attempt: int | None = Field(default=None, description="Attempt number of the turn (1-based).")
    provider: str | None = Field(default=None, description="Provider of the failed exchange.")
    request_key: str | None = Field(default=None, description="Replay key of the attempt's request.")
    stream: bool | None = Field(default=None, description="Whether the client asked for SSE.")
    partial: bool | None = Field(default=None, description="True when the answer was cut.")
    response_headers: dict[str, str] | None = Field(default=None, description="Response headers kept for replay.")
    transport: str | None = Field(default=None, description="Transport failure, as on model_call.")
    sse: str | None = Field(default=None, description="The SSE text received before the failure (redacted).")
    event_offsets_ms: list[float] | None = Field(default=None, description="Arrival time of each SSE event.")
    latency_ms: float | None = Field(default=None, description="Time from request to the end of the attempt.")
    escaped: list[str] | None = Field(default=None, description="Fields holding escaped bytes, as on model_call.")


class HttpExchange(_Record):
    """A request to a route that is not a model endpoint tracekit reads (token counting, model lists, an API it
    does not know), forwarded and recorded as it came so that replay can answer it."""

    kind: Literal["http_exchange"] = "http_exchange"
    method: str = Field(description="HTTP method.")
    path: str = Field(description="Request path.")
    query: str | None = Field(default=None, description="Query string, secret parameters removed.")
    status: int | None = Field(default=None, description="HTTP status returned to the client.")
    request_key: str | None = Field(default=None, description="Replay key: method, path and canonical body.")
    request_headers: dict[str, str] | None = Field(
        default=None, description="Request headers (secret values replaced, hop-by-hop headers left out)."
    )
    request: Any = Field(default=None, description="Request body parsed as JSON, when it is JSON.")
    request_raw: str | None = Field(default=None, description="Request body text when it is not JSON.")
    response_headers: dict[str, str] | None = Field(default=None, description="Response headers as passed on.")
    response: Any = Field(default=None, description="Response body parsed as JSON, when it is JSON.")
    response_raw: str | None = Field(default=None, description="Response body text when it is not JSON (SSE...).")
    latency_ms: float | None = Field(default=None, description="Time from request to last byte.")
    model_output: bool | None = Field(
        default=None, description="True when the route produces model output that tracekit does not read."
    )
    transport: str | None = Field(default=None, description="Transport failure, as on model_call.")
    replayed: bool | None = Field(default=None, description="True when a recording answered (replay).")
    escaped: list[str] | None = Field(default=None, description="Fields holding escaped bytes, as on model_call.")


class McpExchange(_Record):
    """One JSON-RPC exchange between an agent's MCP client and a tool server, as ``tracekit mcp record`` relayed
    it (``tools/call`` also gives a tool_call and a tool_result record with ``side`` 'tool')."""

    kind: Literal["mcp_exchange"] = "mcp_exchange"
    method: str = Field(description="JSON-RPC method: initialize, tools/list, tools/call, notifications/..., ...")
    direction: str = Field(
        default="client", description="Who sent the request or notification: 'client' (the agent) or 'server'."
    )
    id: Any = Field(default=None, description="JSON-RPC id of the request (None for a notification).")
    params: Any = Field(default=None, description="Request params, as sent.")
    result: Any = Field(default=None, description="Result as the client received it (after any intercept).")
    error: Any = Field(default=None, description="JSON-RPC error object, when the answer was one.")
    latency_ms: float | None = Field(default=None, description="Time from the request to its answer.")
    call_index: int | None = Field(
        default=None, description="tools/call: ``index`` of its tool_call record (the model's, once joined)."
    )
    mcp_call: int | None = Field(default=None, description="Once joined: ``index`` of the call in the tool-side trace.")
    session: str | None = Field(default=None, description="Mcp-Session-Id of the HTTP session, when there was one.")
    fault: str | None = Field(
        default=None, description="Transport fault injected into this exchange: timeout, cut, latency, error."
    )
    original: Any = Field(default=None, description="What the server answered, when an intercept or fault replaced it.")


class AgentRun(_Record):
    """How an external agent process ended (``tracekit run --agent-cmd``)."""

    kind: Literal["agent_run"] = "agent_run"
    command: str = Field(description="The command line that was run.")
    exit_status: int | None = Field(default=None, description="Exit status (None when killed on timeout).")
    timed_out: bool = Field(default=False, description="True when the timeout ended the process.")
    stderr: str = Field(default="", description="Tail of the process's standard error (redacted).")
    duration_ms: float | None = Field(default=None, description="Wall time of the process.")


class Guard(_Record):
    """What the live guard (``tracekit record --guard``) noticed in a session and what it did about it."""

    kind: Literal["guard"] = "guard"
    event: str = Field(description="'finding' (a detector's finding) or 'budget' (a session budget was exceeded).")
    rule: str = Field(description="The finding kind (``repeated_call``) or the budget (``tokens``) that fired.")
    action: str = Field(description="'record', 'warn' (a note was added to the next request) or 'stop'.")
    severity: str | None = Field(default=None, description="The finding's severity (findings only).")
    calls: list[int] = Field(default_factory=list, description="``index`` of the tool calls the event names.")
    messages: list[int] = Field(default_factory=list, description="``message_index`` of the messages it names.")
    figures: dict[str, Any] = Field(
        default_factory=dict, description="The numbers behind it: a budget's ``used`` and ``limit``."
    )
    message: str = Field(default="", description="What happened, in a sentence.")
    model_call: int | None = Field(default=None, description="model_call of the request the guard acted on.")


RECORD_CLASSES: tuple[type[BaseModel], ...] = (
    Header,
    SystemMessage,
    UserMessage,
    AssistantMessage,
    ToolCall,
    ToolResult,
    ModelCall,
    Intercept,
    ErrorRecord,
    AgentRun,
    HttpExchange,
    Guard,
    McpExchange,
)
"""Every record class, one per ``kind`` (the members of ``Record``)."""

Record = Annotated[
    Header
    | SystemMessage
    | UserMessage
    | AssistantMessage
    | ToolCall
    | ToolResult
    | ModelCall
    | Intercept
    | ErrorRecord
    | AgentRun
    | HttpExchange
    | Guard
    | McpExchange,
    Field(discriminator="kind"),
]
"""Any record of a trace file, selected by its ``kind``."""

RECORD_KINDS: tuple[str, ...] = tuple(cls.model_fields["kind"].default for cls in RECORD_CLASSES)
"""The ``kind`` of each record class."""
