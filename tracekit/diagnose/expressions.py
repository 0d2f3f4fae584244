"""The policy file's small expression language, over an earlier tool result (and the call's arguments).

Grammar (``docs/diagnosis.md``)::

    expr    := and ("or" and)*
    and     := not ("and" not)*
    not     := "not" not | compare
    compare := value (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in") value)?
    value   := path | "len(" path ")" | STRING | NUMBER | true | false | null | "[" value ("," value)* "]"
    path    := NAME ("." NAME | "[" INTEGER "]")*

A path names a field of the result (``status``, ``flights[0].status``), or of the call's arguments under
``args`` (``args.reservation_id``). A missing field is ``null``. Comparing values of different types (a
string with a number) is false, never an error: an expression states what must hold, and a result of an
unexpected shape does not satisfy it.

Example::

    check = parse_expression('status == "pending" or cabin in ["business"]')
    check.evaluate({"status": "pending"}, {})   # True
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tracekit.errors import ExpressionError

_TOKEN = re.compile(
    r"""\s*(?:(?P<number>-?\d+(?:\.\d+)?)|(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
    r"""|(?P<op>==|!=|<=|>=|<|>|\(|\)|\[|\]|,|\.)|(?P<name>[A-Za-z_][A-Za-z0-9_]*))"""
)
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}  # fmt: skip
_CONSTANTS = {"true": True, "false": False, "null": None}

Node = Callable[[Any, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Expression:
    """A parsed expression: ``evaluate(result, arguments)`` says whether it holds."""

    text: str
    _node: Node

    def evaluate(self, result: Any, arguments: Mapping[str, Any] | None = None) -> bool:
        """Whether the expression holds for ``result`` (the earlier call's parsed result) and ``arguments``."""
        return bool(self._node(result, arguments or {}))


def parse_expression(text: str) -> Expression:
    """Parse ``text``; ``ExpressionError`` naming the position of what does not parse."""
    tokens: list[tuple[str, Any, int]] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise ExpressionError(f"{text!r}: cannot read from position {position + 1}")
        kind = match.lastgroup or ""
        raw = match.group(kind)
        value: Any = raw
        if kind == "number":
            value = float(raw) if "." in raw else int(raw)
        elif kind == "string":
            value = raw[1:-1].encode().decode("unicode_escape") if "\\" in raw else raw[1:-1]
        tokens.append((kind, value, match.start(kind)))
        position = match.end()
    parser = _Parser(text, tokens)
    node = parser.parse_or()
    if parser.at < len(tokens):
        raise ExpressionError(f"{text!r}: unexpected {tokens[parser.at][1]!r} at position {tokens[parser.at][2] + 1}")
    return Expression(text, node)


class _Parser:
    def __init__(self, text: str, tokens: list[tuple[str, Any, int]]) -> None:
        self.text, self.tokens, self.at = text, tokens, 0

    def peek(self, value: str) -> bool:
        return (
            self.at < len(self.tokens)
            and self.tokens[self.at][0] in ("op", "name")
            and self.tokens[self.at][1] == value
        )

    def take(self, value: str) -> None:
        if not self.peek(value):
            where = self.tokens[self.at][2] + 1 if self.at < len(self.tokens) else len(self.text) + 1
            raise ExpressionError(f"{self.text!r}: expected {value!r} at position {where}")
        self.at += 1

    def parse_or(self) -> Node:
        left = self.parse_and()
        while self.peek("or"):
            self.at += 1
            left = _either(left, self.parse_and())
        return left

    def parse_and(self) -> Node:
        left = self.parse_not()
        while self.peek("and"):
            self.at += 1
            left = _both(left, self.parse_not())
        return left

    def parse_not(self) -> Node:
        if self.peek("not"):
            self.at += 1
            inner = self.parse_not()
            return lambda r, a: not inner(r, a)
        return self.parse_compare()

    def parse_compare(self) -> Node:
        left = self.parse_value()
        if self.at < len(self.tokens) and self.tokens[self.at][0] == "op" and self.tokens[self.at][1] in _COMPARE:
            function = _COMPARE[self.tokens[self.at][1]]
            self.at += 1
            right = self.parse_value()
            return lambda r, a: _compare(function, left(r, a), right(r, a))
        negate = self.peek("not") and self.at + 1 < len(self.tokens) and self.tokens[self.at + 1][1] == "in"
        if negate:
            self.at += 1
        if self.peek("in"):
            self.at += 1
            right = self.parse_value()
            return lambda r, a: _contains(right(r, a), left(r, a)) != negate
        return left

    def parse_value(self) -> Node:
        if self.at >= len(self.tokens):
            raise ExpressionError(f"{self.text!r}: expected a value at the end")
        kind, value, where = self.tokens[self.at]
        if kind in ("number", "string"):
            self.at += 1
            return lambda r, a: value
        if self.peek("["):
            self.at += 1
            items: list[Node] = []
            while not self.peek("]"):
                if items:
                    self.take(",")
                items.append(self.parse_value())
            self.take("]")
            return lambda r, a: [item(r, a) for item in items]
        if kind == "name" and value in _CONSTANTS:
            self.at += 1
            return lambda r, a: _CONSTANTS[value]
        if kind == "name" and value == "len" and self.at + 1 < len(self.tokens) and self.tokens[self.at + 1][1] == "(":
            self.at += 2
            inner = self.parse_value()
            self.take(")")
            return lambda r, a: len(found) if isinstance(found := inner(r, a), (list, dict, str)) else None
        if kind == "name":
            return self.parse_path()
        raise ExpressionError(f"{self.text!r}: unexpected {value!r} at position {where + 1}")

    def parse_path(self) -> Node:
        steps: list[str | int] = [self.tokens[self.at][1]]
        self.at += 1
        while self.peek(".") or self.peek("["):
            if self.peek("."):
                self.at += 1
                if self.at >= len(self.tokens) or self.tokens[self.at][0] != "name":
                    raise ExpressionError(f"{self.text!r}: expected a field name after '.'")
                steps.append(self.tokens[self.at][1])
                self.at += 1
            else:
                self.at += 1
                if self.at >= len(self.tokens) or self.tokens[self.at][0] != "number":
                    raise ExpressionError(f"{self.text!r}: expected an index inside '[...]'")
                steps.append(int(self.tokens[self.at][1]))
                self.at += 1
                self.take("]")
        return lambda r, a: _walk(r, a, steps)


def _either(first: Node, second: Node) -> Node:
    return lambda r, a: bool(first(r, a)) or bool(second(r, a))


def _both(first: Node, second: Node) -> Node:
    return lambda r, a: bool(first(r, a)) and bool(second(r, a))


def _walk(result: Any, arguments: Mapping[str, Any], steps: list[str | int]) -> Any:
    value: Any = arguments if steps[0] == "args" else result
    for step in steps[1:] if steps[0] == "args" else steps:
        if isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
            value = value[step]
        elif isinstance(step, str) and isinstance(value, Mapping):
            value = value.get(step)
        else:
            return None
    return value


def _compare(function: Callable[[Any, Any], bool], left: Any, right: Any) -> bool:
    try:
        return function(left, right)
    except TypeError:
        return False


def _contains(container: Any, item: Any) -> bool:
    if isinstance(container, (list, dict)):
        return item in container
    if isinstance(container, str) and isinstance(item, str):
        return item in container
    return False
