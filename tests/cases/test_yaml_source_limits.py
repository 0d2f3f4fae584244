"""YAML bombs are refused from the parser's events, before composing: deep nesting and alias expansion.

Every file is written here by the test; the bombs are the classic shapes (billion laughs: nine anchors of
nine aliases each; a self-referencing anchor; bracket nesting), scaled to just past each bound.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tracekit.cases.yaml_source import read_yaml
from tracekit.errors import CaseError
from tracekit.safe_yaml import MAX_ALIAS_NODES, MAX_ALIASES, MAX_DEPTH


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bomb.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _billion_laughs() -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join([*lines, "id: *a9", ""])


def _brackets(depth: int) -> str:
    return "id: " + "[" * depth + "]" * depth + "\n"  # the top mapping is one level more


@pytest.mark.parametrize(("text", "line", "message"), [
    (_brackets(MAX_DEPTH), 1, f"nested deeper than {MAX_DEPTH} levels"),
    # crashed libyaml's composer before; PyYAML 6.0.4 refuses it itself, in its own words
    (_brackets(50_000), 1, None),
    ("".join(f"{' ' * i}k{i}:\n" for i in range(100)) + " " * 100 + "x: 1\n", MAX_DEPTH + 1, "nested deeper"),
    (_billion_laughs(), 5, f"aliases stand for more than {MAX_ALIAS_NODES} nodes"),
    ("a: &a x\nb: [" + ", ".join(["*a"] * (MAX_ALIASES + 1)) + "]\n", 2, f"more than {MAX_ALIASES} aliases"),
    ("a: &a [1, *a]\n", 1, "alias *a inside the node it names"),
])  # fmt: skip
def test_bombs_are_refused_quickly_naming_file_and_line(
    tmp_path: Path, text: str, line: int, message: str | None
) -> None:
    path = _write(tmp_path, text)
    started = time.perf_counter()
    with pytest.raises(CaseError) as caught:
        read_yaml(path)
    assert time.perf_counter() - started < 1.0
    [problem] = caught.value.problems  # type: ignore[attr-defined]
    assert problem.file.endswith("bomb.yaml") and problem.line == line
    if message is not None:  # tracekit's own limits; a dependency's refusal is checked by file and line only
        assert message in problem.message, problem.message


def test_nesting_and_aliases_within_the_bounds_load(tmp_path: Path) -> None:
    nested = _brackets(MAX_DEPTH - 1)
    shared = "args: &args {city: 北京, days: [1, 2]}\n" + "".join(f"k{i}: *args\n" for i in range(MAX_ALIASES))
    value, depth = read_yaml(_write(tmp_path, nested)).data["id"], 0
    while value:
        [value], depth = value, depth + 1
    assert (value, depth) == ([], MAX_DEPTH - 2)
    document = read_yaml(_write(tmp_path, shared))
    assert document.data[f"k{MAX_ALIASES - 1}"] == {"city": "北京", "days": [1, 2]}


def test_a_duplicate_key_in_an_aliased_mapping_is_reported_once(tmp_path: Path) -> None:
    path = _write(tmp_path, "a: &m {y: 1, y: 2}\nb: *m\nc: *m\nd: {x: 1, x: 2}\n")
    with pytest.raises(CaseError) as caught:
        read_yaml(path)
    assert [(p.line, p.message) for p in caught.value.problems] == [  # type: ignore[attr-defined]
        (1, "duplicate key 'y' (first on line 1)"),
        (4, "duplicate key 'x' (first on line 4)"),
    ]


def test_an_undefined_alias_is_still_invalid_yaml(tmp_path: Path) -> None:
    with pytest.raises(CaseError, match=r"bomb\.yaml:1: invalid YAML: found undefined alias"):
        read_yaml(_write(tmp_path, "a: *missing\n"))
