"""Helpers of the tests that import what real producers emitted: the proxy recording the same session in
front of the fake upstream, OTLP JSON made by the OpenTelemetry SDK's own encoder, and analyze JSON."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
import orjson
from click.testing import CliRunner
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from tracekit.cli import cli
from tracekit.proxy import ProxyConfig, RunningProxy
from tracekit.redact import Redactor
from tracekit.testing import FakeUpstream, ScriptLike
from tracekit.trace import load_trace, trace_files


@contextmanager
def recorded_upstream(script: ScriptLike, out: Path) -> Iterator[RunningProxy]:
    """The fake upstream playing ``script`` behind a recording proxy writing to ``out`` (the agent talks to
    the proxy, as with ``tracekit record``)."""
    with FakeUpstream(script) as upstream:
        config = ProxyConfig(upstream=upstream.url, out_dir=out, redactor=Redactor())
        with RunningProxy(config) as proxy:
            yield proxy


@contextmanager
def instrumented(instrumentor: Any, **options: Any) -> Iterator[None]:
    """``instrumentor`` instrumenting the openai SDK for the block, and the SDK exactly as before afterwards.

    The instrumentations' ``uninstrument()`` leaves some wrappers in place (the Responses resource's
    ``create``, ``parse`` and ``retrieve`` among them); one left behind changed the request a later test's
    client sent, so every openai resource class is restored from a snapshot here."""
    saved = [(cls, dict(vars(cls))) for cls in _openai_resource_classes()]
    instrumentor.instrument(**options)
    try:
        yield
    finally:
        instrumentor.uninstrument()
        for cls, attributes in saved:
            for name, value in attributes.items():
                if vars(cls).get(name) is not value and not name.startswith("__"):
                    setattr(cls, name, value)


def _openai_resource_classes() -> list[type]:
    classes: list[type] = [openai.OpenAI, openai.AsyncOpenAI]
    for module_info in pkgutil.walk_packages(openai.resources.__path__, "openai.resources."):
        module = importlib.import_module(module_info.name)
        classes += [cls for _, cls in inspect.getmembers(module, inspect.isclass) if cls.__module__ == module.__name__]
    return classes


def otlp_json(spans: Sequence[Any] = (), logs: Sequence[Any] = ()) -> bytes:
    """Finished SDK spans (and log records) in the OTLP/JSON encoding, as an OTLP exporter would send them:
    the SDK's protobuf encoder, printed by protobuf's JSON printer; spans and logs one document a line."""
    lines = [json_format.MessageToJson(encode_spans(spans), indent=None)] if spans else []
    if logs:
        lines.append(json_format.MessageToJson(encode_logs(logs), indent=None))
    return ("\n".join(lines) + "\n").encode()


def analyze_json(*paths: Path, cases: Path | None = None, options: Sequence[str] = ()) -> dict[str, Any]:
    """``tracekit analyze PATH... --json`` (CLI, in process), parsed. The JSON is written to a temporary folder,
    never beside the input (which may be the repository's own recordings)."""
    with tempfile.TemporaryDirectory(prefix="tracekit-analyze-") as scratch:
        out = Path(scratch) / "results.json"
        args = ["analyze", *map(str, paths), "--json", str(out), *options] + (["--cases", str(cases)] if cases else [])
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        document: dict[str, Any] = orjson.loads(out.read_bytes())
    return document


def session_view(entry: dict[str, Any]) -> dict[str, Any]:
    """What must agree between an imported trace and the proxy's recording of the same session."""
    return {"tool_calls": entry["tool_calls"], "stats": entry["stats"]}


def final_answers(folder: Path) -> list[str]:
    """The final answer of each trace in ``folder``."""
    return [load_trace(path).final_answer() for path in trace_files([folder])]


def import_command(fmt: str, *args: str) -> Any:
    """``tracekit import FMT ARGS...`` in process (exceptions surface)."""
    return CliRunner().invoke(cli, ["import", fmt, *args], catch_exceptions=False)
