"""Loading intercepts and faults from the case library's files and from raw seed JSON files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracekit.errors import CaseError
from tracekit.intercepts import SeenCall, active_faults, load_intercept_config

CASES = Path(__file__).resolve().parents[2] / "cases"


@pytest.mark.skipif(not (CASES / "c4" / "C4-LD-01.yaml").exists(), reason="case library not present")
def test_case_file_intercepts_load_through_the_case_model() -> None:
    config = load_intercept_config(CASES / "c4" / "C4-LD-01.yaml")
    assert config.case_id == "C4-LD-01"
    replacement = config.intercepts[0].replacement_for(SeenCall("search_flights", {"date": "下周五"}))
    assert replacement is not None and replacement.is_error
    assert replacement.content.startswith("Error: Invalid date parameter format")


def test_raw_json_file_with_intercepts_and_faults(tmp_path: Path) -> None:
    path = tmp_path / "faults.json"
    path.write_text(
        '{"intercepts": [{"type": "tool_intercept", "intercept_tool": "t", "inject_tool_result": {"content": "坏"}}],'
        ' "faults": [{"type": "http_error", "status": 529, "should_retry": true, "on_requests": [1]},'
        ' {"type": "latency", "latency_ms": 20}, {"type": "stream_cut", "cut_after_events": 3}]}',
        encoding="utf-8",
    )
    config = load_intercept_config(path)
    first, second = active_faults(config.faults, 1), active_faults(config.faults, 2)
    assert first.http_error is not None and first.http_error.status == 529 and first.http_error.should_retry
    assert second.http_error is None and second.latency_ms == 20 and second.cut_after_events == 3


def test_bad_fault_names_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("faults:\n  - {type: http_error, status: 200}\n", encoding="utf-8")
    with pytest.raises(CaseError, match=r"bad\.yaml\.faults\[0\]\.status"):
        load_intercept_config(path)
