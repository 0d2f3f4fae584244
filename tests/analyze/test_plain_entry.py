"""The entry of a trace bound to no case is written from its plain values (``entry.entry_json``), without the
validation ``analyze_trace`` does: these tests hold it to the bytes and the digest the validated model gives,
on every recorded trace (under each preset), on traces with guard records and on a trace without a file."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tracekit.analyze.config import detector_options
from tracekit.analyze.entry import AnalyzeSettings, entry_json, trace_entry
from tracekit.analyze.results import analyze_file
from tracekit.analyze.sources import SourceNames
from tracekit.analyze.summary import digest
from tracekit.results.model import TraceResult
from tracekit.trace import Trace, load_trace
from tracekit.trace.models import Guard

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = sorted(path for path in (ROOT / "recordings").rglob("*.jsonl") if "judge" not in path.parts)


def _same_as_the_model(trace: Trace, settings: AnalyzeSettings) -> None:
    entry = trace_entry(trace, settings)
    model = TraceResult.model_validate(entry)
    assert entry_json(entry) == model.to_json_bytes()
    assert digest(entry) == digest(model)


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


def test_an_entry_with_a_verdict_goes_through_its_model() -> None:
    entry = trace_entry(load_trace(RECORDINGS[0], fast=True))
    with pytest.raises(ValueError, match="model"):
        entry_json({**entry, "verdict": {"result": "pass"}})
    with pytest.raises(ValueError, match="model"):
        digest({**entry, "verdict": {"result": "pass"}})
