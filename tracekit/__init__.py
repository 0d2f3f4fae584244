"""tracekit: record, replay and analyze the traces of tool-using LLM agents."""

from tracekit.errors import TracekitError

__version__ = "0.1.0"

__all__ = ["TracekitError", "__version__"]
