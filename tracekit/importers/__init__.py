"""Other people's transcripts as tracekit traces: Anthropic and OpenAI message lists, OpenAI Responses
items, tau-bench.

Each importer checks its input (``ImportFormatError`` names the file and the position), builds records
with ``tracekit.trace.TraceBuilder`` and returns ``ImportedTrace`` values; ``write_traces`` writes them.

The importers of what agents emit (``import_otel``: OpenTelemetry GenAI spans; ``import_openinference``;
``import_inspect``: inspect_ai logs; ``import_openai_agents``: the Agents SDK's trace export) read on past
bad input instead: they take a ``problems`` list, append ``file:position: what`` for each part they could
not read, and note in each trace's ``meta.problems`` what they could not map.

Example::

    from tracekit.importers import import_tau_bench, write_traces

    paths = write_traces(import_tau_bench("gpt-4o-airline.json"), "traces/")
"""

from tracekit.importers.anthropic_messages import import_anthropic_messages, read_anthropic_messages
from tracekit.importers.common import ImportedTrace, build_trace, check_case_id, write_traces
from tracekit.importers.inspect_log import import_inspect
from tracekit.importers.openai_agents import import_openai_agents
from tracekit.importers.openai_messages import import_openai_messages, read_openai_messages
from tracekit.importers.openai_responses import import_openai_responses, read_openai_responses
from tracekit.importers.openinference import import_openinference
from tracekit.importers.otel import import_otel
from tracekit.importers.tau_bench import import_tau_bench, iter_tau_bench, read_tau_bench

__all__ = [
    "ImportedTrace",
    "build_trace",
    "check_case_id",
    "import_anthropic_messages",
    "import_inspect",
    "import_openai_agents",
    "import_openai_messages",
    "import_openai_responses",
    "import_openinference",
    "import_otel",
    "import_tau_bench",
    "iter_tau_bench",
    "read_anthropic_messages",
    "read_openai_messages",
    "read_openai_responses",
    "read_tau_bench",
    "write_traces",
]
