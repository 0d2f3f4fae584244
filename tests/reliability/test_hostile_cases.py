"""Hostile case files: random YAML documents, wrong types and unknown fields in a real case, Python tags,
oversize files and YAML bombs (alias expansion, deep nesting).

Only ``CaseError`` may come out of ``load_case``, its message naming the file (and the line and field where
there is one); the bombs go through ``tracekit cases validate`` in a child process, because a bomb that
works hangs or crashes the process, and must end quickly with exit status 2 and a message naming the file.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracekit.cases import Case, load_case
from tracekit.cases.yaml_source import MAX_FILE_BYTES
from tracekit.errors import CaseError
from tracekit.safe_yaml import MAX_INT_DIGITS

from .support import clean_env, tracekit_command

REAL_CASE = Path(__file__).parents[2] / "cases" / "b2" / "B2-PC-02.yaml"
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
yaml_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


def _load(path: Path, data: Any) -> Case | CaseError:
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    try:
        return load_case(path)
    except CaseError as exc:
        assert str(exc).startswith(path.name) or str(path) in str(exc), f"the error does not name the file: {exc}"
        return exc


def _at_line(error: CaseError, name: str) -> bool:
    """Whether the error starts with ``<path>/<name>:<line>: `` and each of its problems names file and line."""
    problems = getattr(error, "problems", [])
    return bool(re.match(rf"^(.*/)?{re.escape(name)}:\d+: ", str(error))) and all(
        problem.file.endswith(name) and isinstance(problem.line, int) for problem in problems
    )


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path in ``value`` (mapping keys and list indexes)."""
    found: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in items:
        found.append((*prefix, key))
        found.extend(_paths(child, (*prefix, key)))
    return found


def _replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, *rest = path
    copy = dict(data) if isinstance(data, dict) else list(data)
    copy[head] = _replaced(copy[head], tuple(rest), value)
    return copy


REAL_DATA = yaml.safe_load(REAL_CASE.read_text(encoding="utf-8"))
REAL_PATHS = _paths(REAL_DATA)


@FUZZ
@given(document=yaml_values)
def test_any_yaml_document_is_a_case_or_a_case_error(tmp_path: Path, document: Any) -> None:
    _load(tmp_path / "random.yaml", document)


@FUZZ
@given(path=st.sampled_from(REAL_PATHS), value=yaml_values)
def test_a_wrong_value_anywhere_in_a_real_case_is_named_by_line_and_field(
    tmp_path: Path, path: tuple[Any, ...], value: Any
) -> None:
    result = _load(tmp_path / "B2-PC-02.yaml", _replaced(REAL_DATA, path, value))
    if isinstance(result, CaseError):
        assert _at_line(result, "B2-PC-02.yaml"), str(result)


@FUZZ
@given(
    path=st.sampled_from([(), *(p for p in REAL_PATHS if isinstance(p[-1], str))]),
    key=st.from_regex(r"zz_[a-z]{1,8}", fullmatch=True),
)
def test_unknown_fields_are_refused_by_name(tmp_path: Path, path: tuple[Any, ...], key: str) -> None:
    target = REAL_DATA
    for step in path:
        target = target[step]
    if not isinstance(target, dict):
        return
    result = _load(tmp_path / "B2-PC-02.yaml", _replaced(REAL_DATA, path, {**target, key: 1}))
    if not path:
        assert isinstance(result, CaseError), "an unknown top-level field was accepted"
    if isinstance(result, CaseError):
        # "unknown field 'zz_x'", "unknown matcher 'zz_x'", or under ``args`` (where any key is an argument
        # name) the field path ending in the key.
        assert f"unknown field {key!r}" in str(result) or key in str(result), str(result)
        assert _at_line(result, "B2-PC-02.yaml"), str(result)


@pytest.mark.parametrize(
    "tagged",
    [
        '!!python/object/apply:os.system ["touch {marker}"]',
        "!!python/name:os.system",
        '!!python/object/new:subprocess.Popen [["touch", "{marker}"]]',
        "!!python/module:os",
    ],
)
def test_python_tags_are_refused_and_never_run(tmp_path: Path, tagged: str) -> None:
    marker = tmp_path / "PWNED"
    path = tmp_path / "tagged.yaml"
    path.write_text(f"id: B2-PC-02\ntitle: {tagged.format(marker=marker)}\n", encoding="utf-8")
    with pytest.raises(CaseError, match=r"^(.*/)?tagged\.yaml:2: invalid YAML: could not determine a constructor"):
        load_case(path)
    assert not marker.exists()


def test_a_file_over_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_bytes(b"id: B2-PC-02\ntitle: '" + b"x" * MAX_FILE_BYTES + b"'\n")
    with pytest.raises(CaseError, match=rf"^(.*/)?huge\.yaml: file is \d+ bytes, limit {MAX_FILE_BYTES}"):
        load_case(path)


def _billion_laughs() -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join([*lines, "id: *a9", ""])


# Found by this suite: alias expansion hung the loader; deep nesting raised RecursionError, or crashed
# libyaml's composer (SIGSEGV). The loader now refuses them from the parser's events.
BOMBS = [
    pytest.param(_billion_laughs(), id="billion_laughs"),  # 1 kB; 9**9 strings expanded
    pytest.param("id: " + "[" * 1_000 + "]" * 1_000 + "\n", id="nested_1000"),
    pytest.param("id: " + "[" * 50_000 + "]" * 50_000 + "\n", id="nested_50000"),  # 100 kB
    pytest.param("".join(f"{' ' * i}k{i}:\n" for i in range(400)) + " " * 400 + "x: 1\n", id="nested_mappings_400"),
    pytest.param(
        "a: &a [" + ", ".join(["x"] * 2000) + "]\nid: [" + ", ".join(["*a"] * 2000) + "]\n", id="aliases_2000"
    ),
]


@pytest.mark.parametrize("text", BOMBS)
def test_yaml_bombs_are_refused_quickly_with_exit_status_2(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        done = subprocess.run(tracekit_command(["cases", "validate", str(path)]), capture_output=True, timeout=5,
                              env=clean_env(), cwd=tmp_path)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("still loading after 5 s")
    output = done.stdout.decode() + done.stderr.decode()
    assert done.returncode == 2, f"exit status {done.returncode}: {output[-500:]}"
    assert "Traceback" not in output
    assert "bomb.yaml" in output


def _tracekit(args: list[str], cwd: Path) -> tuple[int, str]:
    done = subprocess.run(tracekit_command(args), capture_output=True, timeout=600, env=clean_env(), cwd=cwd)
    return done.returncode, done.stdout.decode() + done.stderr.decode()


def test_a_5000_digit_integer_is_a_file_and_line_error_in_validate_and_analyze(tmp_path: Path) -> None:
    # Found from outside (issue 14): Python refuses to convert 5000 digits, and the ValueError escaped both
    # commands as a traceback.
    library = tmp_path / "cases"
    (library / "b2").mkdir(parents=True)
    shutil.copytree(REAL_CASE.parents[1] / "tools", library / "tools")
    text = REAL_CASE.read_text(encoding="utf-8")
    line = next(number for number, row in enumerate(text.splitlines(), 1) if "number: " in row)
    (library / "b2" / REAL_CASE.name).write_text(re.sub(r"number: \d+", "number: " + "1" * 5000, text, count=1))
    trace = next((REAL_CASE.parents[2] / "recordings").rglob("B2-PC-02*.jsonl"))
    where = library / "b2" / REAL_CASE.name
    expected = f"{where}:{line}: invalid YAML: an integer of more than {MAX_INT_DIGITS} digits"
    for args in (["cases", "validate", str(library)], ["analyze", str(trace), "--cases", str(library)]):
        status, output = _tracekit(args, tmp_path)
        assert "Traceback" not in output and expected in output, output[-1000:]
        assert status == 2, f"{args[0]}: exit status {status}"


@pytest.mark.parametrize("document", ["{}\n", "null\n"])
def test_the_error_names_the_file_as_given_whatever_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, document: str
) -> None:
    # Found by the fuzz test above when the suite ran from /tmp: the file was named relative to the working
    # directory, so the message depended on where tracekit was started.
    path = tmp_path / "cases" / "random.yaml"
    path.parent.mkdir()
    path.write_text(document, encoding="utf-8")
    for cwd in (tmp_path, path.parent, Path(path.anchor)):
        monkeypatch.chdir(cwd)
        with pytest.raises(CaseError, match=rf"^{re.escape(str(path))}:1: "):
            load_case(path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseError, match=r"^cases/random\.yaml:1: "):
        load_case(Path("cases") / "random.yaml")
