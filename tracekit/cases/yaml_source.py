"""Safe YAML loading that remembers where every value came from.

Case and catalog files are read with PyYAML's SafeLoader only (no Python objects), with a size limit,
and without YAML 1.1 timestamp conversion (``2026-04-07`` stays a string, exactly as a tool argument
would). The node tree is kept, so that a pydantic validation error can be reported as
``cases/b2/CASE-01.yaml:14: expect.calls[0].args.date: unknown matcher 'relativ_date'``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from tracekit.errors import CaseError
from tracekit.safe_yaml import SafeLoader, yaml_shape_problem

#: Case and catalog files larger than this are refused (they are hand-written, a few kB each).
MAX_FILE_BYTES = 1_000_000

ModelT = TypeVar("ModelT", bound=BaseModel)


class _Loader(SafeLoader):
    """tracekit's SafeLoader (safe constructors only, bounded integers) without the implicit timestamp type:
    dates stay strings."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file: where (file, line, field) and what."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


def problems_error(problems: list[Problem]) -> CaseError:
    """A CaseError whose message has one line per problem (``.problems`` keeps them)."""
    error = CaseError("\n".join(str(problem) for problem in problems))
    error.problems = problems  # type: ignore[attr-defined]
    return error


def display_path(path: Path) -> str:
    """The path as whoever named it gave it (a library given as ``cases`` shows ``cases/b2/CASE-01.yaml``, an
    absolute one stays absolute), so that a message names a file the reader can open and does not depend on
    the working directory."""
    return str(path)


@dataclass
class YamlDocument:
    """A parsed YAML file: the data and the node tree it was built from."""

    path: Path
    data: Any
    node: yaml.Node | None

    @property
    def name(self) -> str:
        """The file name as error messages show it."""
        return display_path(self.path)

    def line_of(self, loc: tuple[int | str, ...]) -> tuple[int | None, str]:
        """The 1-based line of the deepest node on ``loc`` and the field path actually found in the data.

        Steps of ``loc`` that are not keys of the data (pydantic's union member tags) are skipped.
        """
        node = self.node
        line = node.start_mark.line + 1 if node is not None else None
        parts: list[str] = []
        for step in loc:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(step):
                        node, line = value_node, key_node.start_mark.line + 1
                        parts.append(f".{step}" if parts else str(step))
                        break
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
                node = node.value[step]
                line = node.start_mark.line + 1
                parts.append(f"[{step}]")
        return line, "".join(parts)


def read_yaml(path: str | Path, max_bytes: int = MAX_FILE_BYTES) -> YamlDocument:
    """Read a YAML file safely. Raises CaseError naming the file (and line) when it cannot be read."""
    path = Path(path)
    name = display_path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise problems_error([Problem(name, None, None, f"file is {size} bytes, limit {max_bytes}")])
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise problems_error([Problem(name, None, None, f"cannot read: {exc}")]) from None
    loader = _Loader(text)
    try:
        shape = yaml_shape_problem(text)
        if shape is not None:
            raise problems_error([Problem(name, shape[0], None, shape[1])])
        node = loader.get_single_node()
        duplicates = _duplicate_keys(node) if node is not None else []
        if duplicates:
            raise problems_error([Problem(name, line, None, message) for line, message in duplicates])
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(part for part in (exc.context, exc.problem) if part)
        raise problems_error([Problem(name, line, None, f"invalid YAML: {problem}")]) from None
    except yaml.YAMLError as exc:
        raise problems_error([Problem(name, None, None, f"invalid YAML: {exc}")]) from None
    finally:
        loader.dispose()
    return YamlDocument(path, data, node)


def validation_problems(document: YamlDocument, error: ValidationError) -> list[Problem]:
    """One Problem per field of a pydantic error, located in the YAML file."""
    merged: dict[tuple[int | None, str], list[str]] = {}
    for item in error.errors():
        loc = tuple(item["loc"])
        line, field = document.line_of(loc)
        message = _message(item, loc)
        if item["type"] == "extra_forbidden":  # the message names the unknown key; the field is its parent
            field = field.rsplit(".", 1)[0] if "." in field else ""
        messages = merged.setdefault((line, field), [])
        if message not in messages:
            messages.append(message)
    return [
        Problem(document.name, line, field or None, " or ".join(messages))
        for (line, field), messages in merged.items()
    ]


def load_model(path: str | Path, model: type[ModelT]) -> ModelT:
    """Read a YAML file and validate it as ``model``; errors name file, line and field."""
    document = read_yaml(path)
    return validate_document(document, model)


def validate_document(document: YamlDocument, model: type[ModelT]) -> ModelT:
    """Validate a parsed document as ``model``; raises CaseError with one line per problem."""
    if not isinstance(document.data, dict):
        kind = "empty" if document.data is None else type(document.data).__name__
        raise problems_error([Problem(document.name, 1, None, f"expected a mapping at the top, got {kind}")])
    try:
        return model.model_validate(document.data)
    except ValidationError as exc:
        raise problems_error(validation_problems(document, exc)) from None


def _message(item: Any, loc: tuple[int | str, ...]) -> str:
    kind = item["type"]
    if kind == "extra_forbidden":
        key = loc[-1]
        is_matcher = len(loc) >= 3 and loc[-3] == "args"
        return f"unknown {'matcher' if is_matcher else 'field'} {key!r}"
    if kind == "missing":
        return f"missing required field {loc[-1]!r}"
    message = str(item["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    if kind not in ("value_error", "assertion_error") and "input" in item:
        shown = repr(item["input"])
        message += f" (got {shown[:60] + '...' if len(shown) > 60 else shown})"
    return message


def _duplicate_keys(node: yaml.Node) -> list[tuple[int, str]]:
    """(line, message) for every mapping key given twice (YAML would silently keep the last), in line order.

    Iterative, and each node once: an aliased node is shared, not copied.
    """
    found: list[tuple[int, str]] = []
    visited: set[int] = set()
    pending = [node]
    while pending:
        node = pending.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    line = key_node.start_mark.line + 1
                    if key_node.value in seen:
                        found.append((line, f"duplicate key {key_node.value!r} (first on line {seen[key_node.value]})"))
                    seen.setdefault(key_node.value, line)
                pending.append(value_node)
        elif isinstance(node, yaml.SequenceNode):
            pending.extend(node.value)
    return sorted(found, key=lambda item: item[0])
