"""Lints over a loaded case library: what the schema alone cannot see.

Each lint yields ``Problem`` values naming file, line and field:

- duplicate case ids; a file name or folder that disagrees with the id;
- tools that are not in the catalog (offered, expected, intercepted, or called in the history);
- intercepts and history calls on tools the case does not offer;
- expected arguments (of ``expect.calls``) that break the tool's JSON Schema (unknown parameter, wrong
  type, value outside the enum, a relative date that does not resolve);
- judge-scored cases without a rubric; auto-scored cases without any machine check;
- skills and images that do not exist.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tracekit.cases.base import NO_TOOL
from tracekit.cases.dates import DateError, resolve_date
from tracekit.cases.expect import Expect
from tracekit.cases.loader import CaseEntry, CaseLibrary
from tracekit.cases.matchers import ArgMatcher, ExpectedCall
from tracekit.cases.model import Case
from tracekit.cases.tool_schema import check_value, property_schema
from tracekit.cases.yaml_source import Problem

#: Folder name -> dimension of the cases it holds.
DIMENSION_DIRS = {"b2": "B2", "q3": "Q3", "q1": "Q1", "c4": "C4", "traps": "TT"}

Loc = tuple[int | str, ...]


def lint_library(library: CaseLibrary) -> list[Problem]:
    """Every lint problem of the library, in file order."""
    problems: list[Problem] = []
    if not library.catalog:
        problems.append(Problem(str(library.root), None, None, "no tool catalog found (expected a tools/ folder)"))
    seen: dict[str, Path] = {}
    for entry in library.entries:
        case_id = entry.case.id
        if case_id in seen:
            problems.append(_at(entry, ("id",), f"duplicate id {case_id!r} (also in {seen[case_id]})"))
        seen.setdefault(case_id, entry.path)
        problems += lint_case(entry, library)
    return problems


def lint_case(entry: CaseEntry, library: CaseLibrary) -> list[Problem]:
    """The lint problems of one case."""
    return list(_lint_case(entry, library))


def _lint_case(entry: CaseEntry, library: CaseLibrary) -> Iterator[Problem]:
    case = entry.case
    yield from _lint_placement(entry)
    yield from _lint_tools(entry, library)
    yield from _lint_expected_args(entry, library)
    yield from _lint_scoring(entry)
    for group_name, group in case.skills.groups.items():
        for index, skill in enumerate(group.active_skills):
            if library.skills_dir is not None and skill not in library.skills:
                yield _at(entry, ("skills", group_name, "active_skills", index), f"no skill document {skill}.md")
    for index, image in enumerate(case.input.images):
        if image_path(library, image.path) is None:
            yield _at(entry, ("input", "images", index, "path"), f"image {image.path!r} does not exist")


def image_path(library: CaseLibrary, path: str) -> Path | None:
    """The image file a case names ('assets/x.png', relative to the library directory), if it exists."""
    relative = Path(path.removeprefix("cases/"))
    base = library.root if library.root.is_dir() else library.root.parent
    for candidate in (base / relative, base.parent / relative, Path(path)):
        if candidate.is_file():
            return candidate
    return None


def _at(entry: CaseEntry, loc: Loc, message: str) -> Problem:
    line, field = entry.document.line_of(loc)
    return Problem(entry.document.name, line, field or None, message)


def _lint_placement(entry: CaseEntry) -> Iterator[Problem]:
    case = entry.case
    if entry.path.stem != case.id:
        yield _at(entry, ("id",), f"file name {entry.path.name!r} does not match id {case.id!r}")
    folder = DIMENSION_DIRS.get(entry.path.parent.name)
    if folder is not None and folder != case.dimension:
        yield _at(entry, ("dimension",), f"{case.dimension} case in folder {entry.path.parent.name}/")


def _lint_tools(entry: CaseEntry, library: CaseLibrary) -> Iterator[Problem]:
    case, catalog = entry.case, library.catalog
    offered = set(case.context.tools)
    if catalog:
        for index, name in enumerate(case.context.tools):
            if name not in catalog:
                yield _at(entry, ("context", "tools", index), f"unknown tool {name!r} (not in the catalog)")
        for name in sorted(case.expected_tool_names() - set(catalog)):
            yield _at(entry, ("expect",), f"unknown tool {name!r} (not in the catalog)")
    for index, intercept in enumerate(case.intercepts):
        for name in intercept.tools:
            if name not in offered:
                yield _at(entry, ("intercepts", index), f"intercept on tool {name!r} that the case does not offer")
    for loc, name in _history_tool_uses(case):
        if name not in offered:
            yield _at(entry, loc, f"history calls tool {name!r} that the case does not offer")
    expect = case.expect
    for index, call in enumerate(expect.calls):
        for name in call.tools:
            if name not in offered and name != NO_TOOL:
                yield _at(entry, ("expect", "calls", index), f"expected tool {name!r} is not offered")
    for index, flow in enumerate(expect.data_flow):
        to_tool = catalog.get(flow.to_tool)
        if to_tool is not None and property_schema(to_tool.input_schema, flow.to_arg.split(".")[0]) is None:
            loc = ("expect", "data_flow", index, "to_arg")
            yield _at(entry, loc, f"{flow.to_arg!r} is not a parameter of {flow.to_tool}")


def _history_tool_uses(case: Case) -> Iterator[tuple[Loc, str]]:
    for m_index, message in enumerate(case.input.messages):
        content = message.get("content")
        if isinstance(content, list):
            for b_index, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    yield ("input", "messages", m_index, "content", b_index, "name"), str(block.get("name"))


def _lint_expected_args(entry: CaseEntry, library: CaseLibrary) -> Iterator[Problem]:
    expect = entry.case.expect
    # forbidden_calls may well describe arguments that break the schema (city_id: 北京): not checked
    for index, call in enumerate(expect.calls):
        for arg, matcher in call.args.items():
            messages = _arg_problems(entry.case, call, arg, matcher, library)
            if messages:
                yield _at(entry, ("expect", "calls", index, "args", arg), "; ".join(messages))


def _arg_problems(case: Case, call: ExpectedCall, arg: str, matcher: ArgMatcher, library: CaseLibrary) -> list[str]:
    """Problems of one matcher; with several candidate tools, only when it fits none of them."""
    per_tool: list[list[str]] = []
    for name in call.tools:
        tool = library.catalog.get(name)
        if tool is None:
            continue  # reported as an unknown tool
        schema = property_schema(tool.input_schema, arg)
        if schema is None:
            per_tool.append([f"{arg!r} is not a parameter of {name}"])
        else:
            per_tool.append([f"{name}.{arg}: {message}" for message in _matcher_problems(case, schema, matcher)])
    if not per_tool or any(not problems for problems in per_tool):
        return []
    return [message for problems in per_tool for message in problems]


def _matcher_problems(case: Case, schema: dict[str, Any], matcher: ArgMatcher) -> list[str]:
    kind, value = matcher.kind, matcher.value
    types = schema.get("type")
    type_names = {types} if isinstance(types, str) else set(types or [])
    if kind == "exact":
        return check_value(schema, value)
    if kind == "one_of":
        return [message for item in value for message in check_value(schema, item)]
    if kind == "enum":
        if value is True:
            return [] if "enum" in schema else ["matcher 'enum: true' but the schema has no enum"]
        return [message for item in value for message in check_value(schema, item)]
    if kind == "range" and type_names and not type_names & {"number", "integer"}:
        return [f"range matcher on a {'/'.join(sorted(type_names))} parameter"]
    if kind in ("regex", "contains", "relative_date") and type_names and "string" not in type_names:
        return [f"{kind} matcher on a {'/'.join(sorted(type_names))} parameter"]
    if kind == "relative_date":
        try:
            resolve_date(value, case.context.now)
        except DateError as exc:
            return [str(exc)]
    if kind == "any_of":
        nested = [_matcher_problems(case, schema, item) for item in value]
        return [] if any(not problems for problems in nested) else [m for problems in nested for m in problems]
    return []


def _lint_scoring(entry: CaseEntry) -> Iterator[Problem]:
    case = entry.case
    if case.uses_judge and (case.judge is None or not case.judge.rubric.strip()):
        yield _at(entry, ("scoring",), f"scoring {case.scoring!r} needs judge.rubric")
    if "auto" in case.scoring and case.expect == Expect():
        yield _at(entry, ("expect",), f"scoring {case.scoring!r} but expect has no machine check")
