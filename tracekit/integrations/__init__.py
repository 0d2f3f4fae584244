"""Integrations that write tracekit traces from inside other frameworks while an agent runs.

``openai_agents.TracekitProcessor``: a tracing processor for the OpenAI Agents SDK (the SDK is imported
only by that module, and only when it is used)."""

__all__: list[str] = []
