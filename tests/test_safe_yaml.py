"""Every YAML file tracekit reads goes through one safe loader that refuses bombs by line."""

from __future__ import annotations

import pytest

from tracekit.errors import CaseError, ScriptError, TracekitError
from tracekit.safe_yaml import MAX_DEPTH, MAX_INT_DIGITS, safe_load_yaml

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
)


@pytest.mark.parametrize("error", [TracekitError, CaseError, ScriptError])
def test_bombs_raise_the_callers_error_with_a_line(error: type[TracekitError]) -> None:
    with pytest.raises(error, match=r"f\.yaml:\d+: aliases stand for more than"):
        safe_load_yaml(LAUGHS, "f.yaml", error)
    with pytest.raises(error, match=f"f\\.yaml:1: nested deeper than {MAX_DEPTH}"):
        safe_load_yaml("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "f.yaml", error)
    # Far deeper: refused with the file and the line; the words may be PyYAML's own (6.0.4 limits nesting
    # while scanning ahead, before tracekit's check sees the first event).
    with pytest.raises(error, match=r"^f\.yaml:1: "):
        safe_load_yaml("[" * 50_000, "f.yaml", error)


def test_python_tags_and_syntax_errors_are_refused_by_line() -> None:
    with pytest.raises(TracekitError, match=r"f\.yaml:1: not valid YAML"):
        safe_load_yaml("!!python/object/apply:os.system ['true']", "f.yaml")
    with pytest.raises(TracekitError, match=r"f\.yaml:2: not valid YAML"):
        safe_load_yaml("a: 1\n- b\n", "f.yaml")
    assert safe_load_yaml("城市: 北京\n", "f.yaml") == {"城市": "北京"}


@pytest.mark.parametrize("number", ["1" * 5000, "-" + "9" * (MAX_INT_DIGITS + 1), "0x" + "f" * 5000])
def test_an_integer_too_long_to_print_is_refused_by_line(number: str) -> None:
    # 5000 decimal digits raised Python's ValueError (int max str digits) out of the loader
    refused = rf"^f\.yaml:2: not valid YAML: an integer of more than {MAX_INT_DIGITS} digits"
    with pytest.raises(ScriptError, match=refused):
        safe_load_yaml(f"a: 1\nb: {number}\n", "f.yaml", ScriptError)
    assert safe_load_yaml(f"a: {'9' * MAX_INT_DIGITS}\n", "f.yaml") == {"a": int("9" * MAX_INT_DIGITS)}
