"""The entry of a trace is built as the results model's objects without validation (``ResultModel.built``)
and written by orjson straight from them (``to_json_bytes``): these tests hold both to what validation and
``model_dump`` give, on every recorded trace (under each preset), on traces with guard records and on a
trace without a file."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tracekit.analyze.config import detector_options
from tracekit.analyze.entry import AnalyzeSettings, analyze_trace
from tracekit.analyze.results import analyze_file, build_results, trace_paths
from tracekit.analyze.sources import SourceNames
from tracekit.analyze.summary import digest
from tracekit.application import load_case_set
from tracekit.results.base import JSON_OPTIONS
from tracekit.results.model import Results, TraceResult
from tracekit.trace import Trace, load_trace
from tracekit.trace.models import Guard

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = sorted(path for path in (ROOT / "recordings").rglob("*.jsonl") if "judge" not in path.parts)


def _same_as_the_model(trace: Trace, settings: AnalyzeSettings) -> None:
    built = analyze_trace(trace, settings)
    data = built.to_json_bytes()
    validated = TraceResult.model_validate_json(data)
    assert data == orjson.dumps(built.to_plain(), option=JSON_OPTIONS)  # the writer is model_dump's bytes
    assert validated.to_json_bytes() == data
    assert validated == built
    assert digest(validated) == digest(built)


@pytest.mark.parametrize("preset", [None, "openhands", "roo"])
def test_every_recorded_trace_is_written_as_its_model_writes_it(preset: str | None) -> None:
    assert len(RECORDINGS) > 50
    settings = AnalyzeSettings(detector_options=detector_options(preset=preset), sources=SourceNames.of(["recordings"]))
    for path in RECORDINGS:
        _same_as_the_model(load_trace(path, fast=True), settings)
        _same_as_the_model(load_trace(path), settings)  # the models, as a file the mirrors refuse is read


def test_guard_records_and_a_trace_without_a_file(tmp_path: Path) -> None:
    source = next(path for path in RECORDINGS if "flawed" in path.parts)
    guards = [
        Guard(event="finding", rule="repeated_call", action="warn", severity="warning", calls=[1, 2],
              figures={"calls": 2}, message="called twice", model_call=3),
        Guard(event="budget", rule="tokens", action="stop", figures={"used": 10, "limit": 5}),
        Guard(event="finding", rule="repeated_text", action="record", messages=[4], severity="info"),
    ]  # fmt: skip
    lines = source.read_bytes() + b"".join(orjson.dumps(g.model_dump(mode="json")) + b"\n" for g in guards)
    path = tmp_path / "guarded.jsonl"
    path.write_bytes(lines)
    trace = load_trace(path, fast=True)
    assert len(trace.kind("guard")) == 3
    _same_as_the_model(trace, AnalyzeSettings())
    _same_as_the_model(Trace(header=trace.header, records=trace.records), AnalyzeSettings())
    outcome = analyze_file(path, AnalyzeSettings())
    assert orjson.loads(outcome.entry or b"")["guard"][1] == {
        "kind": "budget", "rule": "tokens", "action": "stop", "calls": [], "figures": {"used": 10, "limit": 5},
        "message": "", "model_call": None,
    }  # fmt: skip


def test_aliases_left_out_fields_and_undeclared_keys_are_written_as_model_dump_writes_them() -> None:
    flawed = ROOT / "recordings" / "flawed"
    settings = AnalyzeSettings(load_case_set(ROOT / "cases"), sources=SourceNames.of([str(flawed)]))
    built = build_results(trace_paths([str(flawed)]), settings)
    results = Results.model_validate({**built.to_plain(), "future_key": {"kept": ["as", "written"]}})
    data = results.to_json_bytes(indent=True)
    assert data == orjson.dumps(results.to_plain(), option=JSON_OPTIONS | orjson.OPT_INDENT_2)
    assert b'"pass^k"' in data and b'"pass":' in data and b'"pass_":' not in data
    assert orjson.loads(data)["future_key"] == {"kept": ["as", "written"]}
