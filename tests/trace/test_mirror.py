"""The read-only mirrors analysis reads traces into (``load_trace(path, fast=True)``) against the models."""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from tracekit.analyze import analyze_trace
from tracekit.application import load_case_set
from tracekit.judge import JudgeConfig, judge_hook
from tracekit.trace import FORMAT_VERSION, load_trace
from tracekit.trace.mirror import MIRRORS, read_mirrored
from tracekit.trace.models import RECORD_CLASSES

ROOT = Path(__file__).resolve().parents[2]
HEADER = orjson.dumps({"kind": "header", "format": FORMAT_VERSION, "trace_id": "t"})

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def valid(annotation: Any) -> st.SearchStrategy[Any]:
    """Values a field of this type accepts (ints for floats included: both paths must make them floats)."""
    if annotation is Any:
        return JSON
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        return st.one_of(*(valid(arg) for arg in typing.get_args(annotation)))
    if origin is typing.Literal:
        return st.sampled_from(typing.get_args(annotation))
    if origin is list:
        return st.lists(valid(typing.get_args(annotation)[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=5), JSON, max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = annotation.model_fields.items()
        return st.fixed_dictionaries({}, optional={name: valid(field.annotation) for name, field in fields})
    simple: dict[Any, st.SearchStrategy[Any]] = {
        type(None): st.none(),
        bool: st.booleans(),
        int: st.integers(-(2**63), 2**63 - 1),
        float: st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53), 2**53),
        str: st.text(max_size=8),
    }
    return simple[annotation]


@st.composite
def raw_records(draw: st.DrawFn) -> dict[str, Any]:
    """A record of some kind whose fields are mostly valid, sometimes missing, sometimes any JSON at all."""
    model = draw(st.sampled_from(RECORD_CLASSES[1:]))
    record: dict[str, Any] = {"kind": model.model_fields["kind"].default}
    for name, info in model.model_fields.items():
        if name == "kind":
            continue
        choice = draw(st.sampled_from(["valid"] * 8 + ["missing", "any"]))
        if choice == "valid" or (choice == "missing" and info.default is PydanticUndefined and draw(st.booleans())):
            record[name] = draw(valid(info.annotation))
        elif choice == "any":
            record[name] = draw(JSON)
    if draw(st.booleans()):
        record[draw(st.text(min_size=1, max_size=5))] = draw(JSON)  # an extra field
    return record


def assert_same_values(mirror: Any, model: BaseModel) -> None:
    """Every field of the model has the same value, of the same type, on the mirror."""
    for name in type(model).model_fields:
        expected, got = getattr(model, name), getattr(mirror, name)
        if isinstance(expected, BaseModel):
            assert_same_values(got, expected)
        else:
            assert got == expected and type(got) is type(expected), name


def test_every_record_class_has_a_mirror_with_its_fields_and_properties() -> None:
    assert len(MIRRORS) == len(RECORD_CLASSES)
    for model, mirror in zip(RECORD_CLASSES, MIRRORS, strict=True):
        assert set(mirror.__struct_fields__) == set(model.model_fields) - {"kind"}
        assert mirror.kind == model.model_fields["kind"].default
        properties = {name for name, value in vars(model).items() if isinstance(value, property)}
        assert properties <= set(dir(mirror))


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(records=st.lists(raw_records(), min_size=1, max_size=4))
def test_mirrors_hold_what_the_models_hold_or_step_aside(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join([HEADER, *(orjson.dumps(record) for record in records)]) + b"\n")
    models, fast = load_trace(path), load_trace(path, fast=True)
    assert fast.problems == models.problems
    assert len(fast.records) == len(models.records)
    for mirror, model in zip([fast.header, *fast.records], [models.header, *models.records], strict=True):
        assert mirror.kind == model.kind
        assert_same_values(mirror, model)


def test_a_torn_line_that_merges_with_the_next_into_json_is_still_reported(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        HEADER + b'\n{"kind":"tool_call","index":0,"name":"a","message_index":1,"input":[1\n2]}\n'
        b'{"kind":"user_message","message_index":0,"content":"hi"}\n'
    )
    assert read_mirrored(path) is None  # "[1,2]" parses: the count of elements gives the merge away
    fast, models = load_trace(path, fast=True), load_trace(path)
    assert [problem.line for problem in fast.problems] == [problem.line for problem in models.problems] == [2, 3]


def test_format_zero_files_are_not_read_as_mirrors(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    rows = [
        {"kind": "header", "version": 0, "trace_id": "old"},
        {"kind": "user_message", "message_index": 0, "content": "x"},
    ]
    path.write_bytes(b"\n".join(orjson.dumps(row) for row in rows) + b"\n")
    assert read_mirrored(path) is None  # a mirror's default format would hide the migration


def test_analysis_of_the_recordings_is_the_same_on_mirrors() -> None:
    """Every check, score, attribution and judge verdict (kept ones, offline) comes out the same."""
    library = load_case_set(ROOT / "cases")
    judge = judge_hook(JudgeConfig(model=None, store=ROOT / "recordings" / "judge", offline=True))
    files = sorted((ROOT / "recordings").glob("[rf]*/*.jsonl"))[::7]
    assert len(files) > 30
    for path in files:
        fast = load_trace(path, fast=True)
        assert read_mirrored(path) is not None
        models = load_trace(path)
        assert analyze_trace(fast, library=library, judge=judge) == analyze_trace(models, library=library, judge=judge)
