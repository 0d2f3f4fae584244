"""Type mutations of real producers' output at every field: the OpenTelemetry SDK's OTLP JSON of the official
GenAI instrumentation and of OpenInference's, the OpenAI Agents SDK's trace export, and an inspect_ai eval log.

Each mutated document is imported in one batch with a good file of another run of the same producer: no
exception but ``ImportFormatError`` may come out (what cannot be read is a problem naming the file), whatever
is imported is written and reads back, and the good file's trace is imported exactly as on its own. The
mutations are seeded and capped (``mutation_support``), so a run is repeatable and bounded.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest
from agents import Agent, Runner, function_tool, set_trace_processors, set_tracing_disabled
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.tracing.processor_interface import TracingExporter
from agents.tracing.processors import BatchTraceProcessor
from inspect_ai import eval as inspect_eval
from mutation_support import mutations
from openinference.instrumentation.openai import OpenAIInstrumentor as OpenInferenceInstrumentor
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from producer_support import instrumented, otlp_json
from test_inspect_importer import mock_model, weather_task
from test_otel_importer import TOOLS, WEATHER, weather_script

from tracekit.errors import ImportFormatError
from tracekit.importers import (
    ImportedTrace,
    import_inspect,
    import_openai_agents,
    import_openinference,
    import_otel,
    write_traces,
)
from tracekit.importers.common import safe_name
from tracekit.testing import FakeUpstream
from tracekit.trace import load_trace

SEED = 27
LIMIT = 250  # mutated documents per producer
Importer = Callable[[list[Path], list[str]], list[ImportedTrace]]


def weather_loop(base_url: str, question: str) -> None:
    """A Chat Completions tool loop asking ``question``."""
    client = openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": question}]
    for _ in range(4):
        message = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS).choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            city = json.loads(call.function.arguments)["city"]
            messages.append({"role": "tool", "tool_call_id": call.id, "content": WEATHER[city]})


def instrumented_runs(instrumentor: Any, env: dict[str, str]) -> list[bytes]:
    """OTLP JSON of two runs (two questions) through ``instrumentor``, one document each."""
    documents = []
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        for question in ("北京、上海、广州天气怎么样？", "广州天气？"):
            exporter = InMemorySpanExporter()
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            with instrumented(instrumentor, tracer_provider=provider), FakeUpstream(weather_script()) as upstream:
                weather_loop(upstream.openai_url, question)
            documents.append(otlp_json(exporter.get_finished_spans()))
            provider.shutdown()
    return documents


@function_tool
def get_weather(city: str) -> str:
    """The weather of a city."""
    return WEATHER.get(city, "未知")


class _Collect(TracingExporter):
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def export(self, items: list[Any]) -> None:
        self.items += [item.export() for item in items if item.export()]


def agents_runs() -> list[bytes]:
    """The Agents SDK's own export (``{"data": [...]}``) of two runs, one document each."""
    documents = []
    for question in ("北京、上海、广州天气怎么样？", "广州天气？"):
        exporter = _Collect()
        processor = BatchTraceProcessor(exporter)
        set_tracing_disabled(False)
        set_trace_processors([processor])
        try:
            with FakeUpstream(weather_script()) as upstream:
                client = openai.AsyncOpenAI(base_url=upstream.openai_url, api_key="sk-test", max_retries=0)
                agent = Agent(name="weather", instructions="你是天气助手。", tools=[get_weather],
                              model=OpenAIChatCompletionsModel("gpt-test", client))
                asyncio.run(Runner.run(agent, question))
            processor.force_flush()
        finally:
            set_trace_processors([])
            set_tracing_disabled(True)
        documents.append(orjson.dumps({"data": exporter.items}))
    return documents


def inspect_runs(folder: Path) -> list[bytes]:
    """inspect_ai's JSON eval logs of two runs (two questions)."""
    documents = []
    for number, question in enumerate(("北京天气？", "纽约天气？")):
        [log] = inspect_eval(weather_task(question), model=mock_model(), log_dir=str(folder / str(number)),
                             log_format="json", display="none")
        assert log.status == "success", log.error
        documents.append(Path(log.location).read_bytes())
    return documents


PRODUCERS: dict[str, tuple[Callable[[Path], list[bytes]], Importer]] = {
    "otel": (lambda _: instrumented_runs(OpenAIInstrumentor(), {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only"}), import_otel),
    "openinference": (lambda _: instrumented_runs(OpenInferenceInstrumentor(), {}), import_openinference),
    "openai-agents": (lambda _: agents_runs(), import_openai_agents),
    "inspect": (inspect_runs, import_inspect),
}  # fmt: skip


def comparable(trace: ImportedTrace) -> list[Any]:
    records = [record.model_dump(mode="json", exclude_none=True) for record in trace.records]
    records[0].pop("created", None)
    return records


@pytest.fixture(scope="module", params=sorted(PRODUCERS))
def producer(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    make, importer = PRODUCERS[request.param]
    folder = tmp_path_factory.mktemp(request.param)
    good_document, other = make(folder / "runs")
    good = folder / "a-good.json"
    good.write_bytes(good_document)
    problems: list[str] = []
    alone = importer([good], problems)
    assert problems == [] and alone, problems
    yield importer, good, orjson.loads(other), [comparable(trace) for trace in alone]


def test_type_mutations_of_real_output_give_problems_never_tracebacks(producer: Any, tmp_path: Path) -> None:
    importer, good, document, expected = producer
    escaped: list[str] = []
    count = 0
    for count, (what, data) in enumerate(mutations(document, seed=SEED, limit=LIMIT), start=1):
        mutated = tmp_path / "b-mutated.json"
        mutated.write_bytes(data)
        out = tmp_path / f"out-{count}"
        problems: list[str] = []
        try:
            traces = importer([good, mutated], problems)
            written = write_traces(traces, out, problems)
        except ImportFormatError as exc:
            escaped.append(f"{what}: the whole batch was refused: {exc}")
            continue
        except Exception:  # what the test looks for: any other exception is a finding
            escaped.append(f"{what}: {traceback.format_exc(limit=-2)}")
            continue
        for problem in problems:
            if not problem.startswith((str(mutated), str(good))):
                escaped.append(f"{what}: a problem that names no file: {problem}")
        by_name = {safe_name(trace.trace_id): trace for trace in traces}
        for path in written:
            if len(load_trace(path).records) != len(by_name[path.stem].records) - 1:  # the header is apart
                escaped.append(f"{what}: {path.name} does not read back whole")
        imported = [comparable(trace) for trace in traces]
        if not all(trace in imported for trace in expected):
            escaped.append(f"{what}: the good file's trace changed or is missing")
    assert count >= min(LIMIT, 100), "the mutator reached too few fields"
    assert not escaped, f"{len(escaped)} of {count} mutations:\n" + "\n".join(escaped[:15])
