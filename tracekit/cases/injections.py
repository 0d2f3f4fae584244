"""What a case injects through the proxy: tool result intercepts and mocks, and transport faults."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, model_validator

from tracekit.cases.base import StrictModel


class InjectedResult(StrictModel):
    """A tool result put in place of the real one: the seed's ``inject_tool_result`` / ``inject_result``."""

    content: str | list[dict[str, Any]] = Field(description="The tool_result content the model will see.")
    is_error: bool = Field(default=False, description="The tool_result's is_error flag.")


class ToolIntercept(StrictModel):
    """Replace every result of a tool (or of each of several tools) by one injected result."""

    type: Literal["tool_intercept"] = "tool_intercept"
    intercept_tool: str | None = Field(default=None, description="The tool whose results are replaced.")
    intercept_tools: list[str] | None = Field(default=None, description="Several tools, same injection.")
    inject_tool_result: InjectedResult = Field(description="The result the model sees instead.")

    @model_validator(mode="after")
    def _names_a_tool(self) -> ToolIntercept:
        if not self.intercept_tool and not self.intercept_tools:
            raise ValueError("give intercept_tool or intercept_tools")
        return self

    @property
    def tools(self) -> list[str]:
        """Every tool this intercept applies to."""
        return [*([self.intercept_tool] if self.intercept_tool else []), *(self.intercept_tools or [])]


class MockedCall(StrictModel):
    """One mocked result. With ``params_match`` it applies to calls whose input contains those key/values;
    without it, to the tool's calls in order."""

    tool: str = Field(description="The tool whose call is mocked.")
    params_match: dict[str, Any] | None = Field(
        default=None, description="Key/values the call's input must contain for this mock to apply."
    )
    inject_result: InjectedResult = Field(
        validation_alias=AliasChoices("inject_result", "result"),
        description="The result the model sees (the seed calls it inject_result; `result` is accepted).",
    )


class ToolMock(StrictModel):
    """The seed's ``tool_mock``: mocked results applied in order."""

    type: Literal["tool_mock"] = "tool_mock"
    mocked_calls: list[MockedCall] = Field(min_length=1, description="Mocks, in the order they apply.")

    @property
    def tools(self) -> list[str]:
        """Every tool this mock applies to."""
        return list(dict.fromkeys(call.tool for call in self.mocked_calls))


Intercept = Annotated[ToolIntercept | ToolMock, Field(discriminator="type")]
"""A case intercept, applied by the proxy to the tool_result blocks of each request."""


class _Fault(StrictModel):
    on_requests: list[int] | None = Field(
        default=None, description="1-based model requests the fault applies to; null means every request."
    )


class HttpErrorFault(_Fault):
    """Answer the model request with an HTTP error in the provider's error format."""

    type: Literal["http_error"] = "http_error"
    status: int = Field(ge=400, le=599, description="HTTP status, e.g. 429, 500, 529.")
    body: dict[str, Any] | str | None = Field(default=None, description="Error body; default per provider.")
    should_retry: bool | None = Field(default=None, description="Value of the x-should-retry header.")


class LatencyFault(_Fault):
    """Delay the model response."""

    type: Literal["latency"] = "latency"
    latency_ms: int = Field(ge=0, description="Added delay before the response starts, in milliseconds.")


class StreamCutFault(_Fault):
    """Close the SSE stream after a number of events."""

    type: Literal["stream_cut"] = "stream_cut"
    cut_after_events: int = Field(ge=0, description="Events sent before the connection is closed.")


class StreamErrorFault(_Fault):
    """Send an in-stream ``error`` event after a number of events."""

    type: Literal["stream_error"] = "stream_error"
    after_events: int = Field(default=0, ge=0, description="Events sent before the error event.")
    error_type: str = Field(default="overloaded_error", description="The error event's error.type.")
    message: str = Field(default="Overloaded", description="The error event's error.message.")


Fault = Annotated[
    HttpErrorFault | LatencyFault | StreamCutFault | StreamErrorFault, Field(discriminator="type")
]
"""A transport fault on the model API, applied by the proxy on top of the intercepts."""

