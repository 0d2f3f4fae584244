"""The policy file's small expression language, over an earlier tool result (and the call's arguments).

Grammar (``docs/diagnosis.md``)::

    expr    := and ("or" and)*
    and     := not ("and" not)*
    not     := "not" not | compare
    compare := sum (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in") sum)?
    sum     := product (("+" | "-") product)*
    product := value ("*" value)*
    value   := path | FUNCTION "(" sum ("," sum)* ")" | STRING | NUMBER | "-" value | true | false | null
             | "[" sum ("," sum)* "]" | "(" expr ")"
    path    := NAME ("." NAME | "[" "-"? INTEGER "]" | "[*]" | "[" sum "]")*

A path names a field of the result (``status``, ``flights[0].status``), of the call's arguments under
``args`` (``args.reservation_id``), or of the latest earlier successful result of another tool under
``latest.TOOL`` (``latest.get_user_details.membership``). ``[*]`` takes the rest of the path of every element
of a list (``args.payment_methods[*].payment_id``: the list of ids); ``[expr]`` reads the key an expression
gives (``payment_methods[args.payment_id].balance``). A missing field is ``null``. Comparing
values of different types (a string with a number) is false, never an error: an expression states what must
hold, and a result of an unexpected shape does not satisfy it; arithmetic on anything but numbers is null
(``+`` also joins two strings).

Functions: ``len(x)``; ``count(x, "glob")``, the elements of list ``x`` (a single value counts as a list of
one) that match a shell-style pattern (``"certificate_*"``); ``all_in(x, y)``, every element of ``x`` is in
``y`` (a list, a mapping's keys, or a string); ``sum(x)``, ``min(x, ...)``, ``max(x, ...)``.

Example::

    check = parse_expression('status == "pending" or cabin in ["business"]')
    check.evaluate({"status": "pending"}, {})   # True
"""

from __future__ import annotations

import fnmatch
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tracekit.errors import ExpressionError

_TOKEN = re.compile(
    r"""\s*(?:(?P<number>\d+(?:\.\d+)?)|(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
    r"""|(?P<op>==|!=|<=|>=|<|>|\(|\)|\[\*\]|\[|\]|,|\.|\*|\+|-)|(?P<name>[A-Za-z_][A-Za-z0-9_]*))"""
)
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}  # fmt: skip
_CONSTANTS = {"true": True, "false": False, "null": None}
_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {"+": operator.add, "-": operator.sub, "*": operator.mul}


class _Scope:
    """What an expression reads: the earlier result, the call's arguments, the latest result of each tool."""

    __slots__ = ("arguments", "latest", "result")

    def __init__(self, result: Any, arguments: Mapping[str, Any], latest: Mapping[str, Any]) -> None:
        self.result, self.arguments, self.latest = result, arguments, latest


Node = Callable[[_Scope], Any]
Step = str | int | None | Node
"""A path step: a field, a list index, ``[*]`` (None), or a computed key."""


@dataclass(frozen=True)
class Expression:
    """A parsed expression: ``evaluate(result, arguments)`` says whether it holds."""

    text: str
    _node: Node

    def evaluate(
        self, result: Any, arguments: Mapping[str, Any] | None = None, latest: Mapping[str, Any] | None = None
    ) -> bool:
        """Whether the expression holds for ``result`` (the earlier call's parsed result), ``arguments`` and
        ``latest`` ({tool name: its latest earlier successful result}, for ``latest.TOOL`` paths)."""
        return bool(self._node(_Scope(result, arguments or {}, latest or {})))


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
        return self._joined("or", self.parse_and, _either)

    def parse_and(self) -> Node:
        return self._joined("and", self.parse_not, _both)

    def _joined(self, word: str, operand: Callable[[], Node], join: Callable[[Node, Node], Node]) -> Node:
        """Operands separated by ``word``, joined from the left."""
        left = operand()
        while self.peek(word):
            self.at += 1
            left = join(left, operand())
        return left

    def parse_not(self) -> Node:
        if self.peek("not"):
            self.at += 1
            inner = self.parse_not()
            return lambda scope: not inner(scope)
        return self.parse_compare()

    def parse_compare(self) -> Node:
        left = self.parse_sum()
        if self.at < len(self.tokens) and self.tokens[self.at][0] == "op" and self.tokens[self.at][1] in _COMPARE:
            function = _COMPARE[self.tokens[self.at][1]]
            self.at += 1
            right = self.parse_sum()
            return lambda scope: _compare(function, left(scope), right(scope))
        negate = self.peek("not") and self.at + 1 < len(self.tokens) and self.tokens[self.at + 1][1] == "in"
        if negate:
            self.at += 1
        if self.peek("in"):
            self.at += 1
            right = self.parse_sum()
            return lambda scope: _contains(right(scope), left(scope)) != negate
        return left

    def parse_sum(self) -> Node:
        left = self.parse_product()
        while self.peek("+") or self.peek("-"):
            function = _ARITHMETIC[self.tokens[self.at][1]]
            self.at += 1
            left = _arithmetic(function, left, self.parse_product())
        return left

    def parse_product(self) -> Node:
        left = self.parse_value()
        while self.peek("*"):
            self.at += 1
            left = _arithmetic(operator.mul, left, self.parse_value())
        return left

    def parse_value(self) -> Node:
        if self.at >= len(self.tokens):
            raise ExpressionError(f"{self.text!r}: expected a value at the end")
        kind, value, where = self.tokens[self.at]
        if kind in ("number", "string"):
            self.at += 1
            return lambda scope: value
        if self.peek("-"):
            self.at += 1
            inner = self.parse_value()
            return _arithmetic(operator.sub, lambda scope: 0, inner)
        if self.peek("("):
            self.at += 1
            grouped = self.parse_or()
            self.take(")")
            return grouped
        if self.peek("["):
            self.at += 1
            items: list[Node] = []
            while not self.peek("]"):
                if items:
                    self.take(",")
                items.append(self.parse_sum())
            self.take("]")
            return lambda scope: [item(scope) for item in items]
        if kind == "name" and value in _CONSTANTS:
            self.at += 1
            return lambda scope: _CONSTANTS[value]
        called = self.at + 1 < len(self.tokens) and self.tokens[self.at + 1][1] == "("
        if kind == "name" and value in FUNCTIONS and called:
            self.at += 2
            arguments = [self.parse_sum()]
            while self.peek(","):
                self.at += 1
                arguments.append(self.parse_sum())
            self.take(")")
            function, arity = FUNCTIONS[value]
            if arity is not None and len(arguments) != arity:
                raise ExpressionError(f"{self.text!r}: {value}() takes {arity} argument(s), got {len(arguments)}")
            return lambda scope: function(*(argument(scope) for argument in arguments))
        if kind == "name":
            return self.parse_path()
        raise ExpressionError(f"{self.text!r}: unexpected {value!r} at position {where + 1}")

    def parse_path(self) -> Node:
        steps: list[Step] = [self.tokens[self.at][1]]
        self.at += 1
        while self.peek(".") or self.peek("[") or self.peek("[*]"):
            if self.peek("[*]"):
                self.at += 1
                steps.append(None)
            elif self.peek("."):
                self.at += 1
                if self.at >= len(self.tokens) or self.tokens[self.at][0] != "name":
                    raise ExpressionError(f"{self.text!r}: expected a field name after '.'")
                steps.append(self.tokens[self.at][1])
                self.at += 1
            else:
                self.at += 1
                literal = self.at + 1 < len(self.tokens) and self.tokens[self.at + 1][1] == "]"
                sign = -1 if self.peek("-") and self.tokens[self.at + 1][0] == "number" else 1
                if sign == 1 and literal and self.tokens[self.at][0] == "number":
                    steps.append(int(self.tokens[self.at][1]))
                    self.at += 1
                elif sign == -1:
                    steps.append(-int(self.tokens[self.at + 1][1]))
                    self.at += 2
                else:  # a computed key: payment_methods[args.payment_id]
                    steps.append(self.parse_sum())
                self.take("]")
        return lambda scope: _start(scope, steps)


def _either(first: Node, second: Node) -> Node:
    return lambda scope: bool(first(scope)) or bool(second(scope))


def _both(first: Node, second: Node) -> Node:
    return lambda scope: bool(first(scope)) and bool(second(scope))


def _arithmetic(function: Callable[[Any, Any], Any], left: Node, right: Node) -> Node:
    def node(scope: _Scope) -> Any:
        a, b = left(scope), right(scope)
        if function is operator.add and isinstance(a, str) and isinstance(b, str):
            return a + b
        numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
        return function(a, b) if numbers else None

    return node


def _start(scope: _Scope, steps: list[Step]) -> Any:
    if steps[0] == "args":
        return _walk(scope.arguments, steps[1:], scope)
    if steps[0] == "latest":
        tool = steps[1] if len(steps) > 1 else None
        return _walk(scope.latest.get(tool), steps[2:], scope) if isinstance(tool, str) else None
    return _walk(scope.result, steps, scope)


def _walk(value: Any, steps: list[Step], scope: _Scope) -> Any:
    for position, step in enumerate(steps):
        if step is None:  # [*]: the rest of the path of every element
            if not isinstance(value, list):
                return None
            rest = steps[position + 1 :]
            return [_walk(item, rest, scope) for item in value]
        if callable(step):
            step = step(scope)
            if isinstance(step, bool) or not isinstance(step, (str, int)):
                return None
        if isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
            value = value[step]
        elif isinstance(step, str) and isinstance(value, Mapping):
            value = value.get(step)
        else:
            return None
    return value


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [] if value is None else [value]


def _count(values: Any, pattern: Any) -> int | None:
    if not isinstance(pattern, str):
        return None
    return sum(1 for item in _items(values) if isinstance(item, str) and fnmatch.fnmatchcase(item, pattern))


def _all_in(values: Any, container: Any) -> bool:
    return all(_contains(container, item) for item in _items(values))


def _length(value: Any) -> int | None:
    return len(value) if isinstance(value, (list, dict, str)) else None


def _numbers(*values: Any) -> list[float]:
    flat = [item for value in values for item in _items(value)]
    return [item for item in flat if isinstance(item, (int, float)) and not isinstance(item, bool)]


def _extreme(pick: Callable[[list[float]], float]) -> Callable[..., Any]:
    return lambda *values: pick(found) if (found := _numbers(*values)) else None


#: The functions of the language: name -> (function, number of arguments; None: any).
FUNCTIONS: dict[str, tuple[Callable[..., Any], int | None]] = {
    "len": (_length, 1),
    "count": (_count, 2),
    "all_in": (_all_in, 2),
    "sum": (lambda values: sum(_numbers(values)), 1),
    "min": (_extreme(min), None),
    "max": (_extreme(max), None),
}


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
