"""Broken case files give one clear message each, naming file, line and field.

The fixtures are written into tmp_path by the tests themselves: a one-tool catalog and a small valid
case (VALID_CASE), each test breaking one thing in a copy of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tracekit.cases.lint import lint_library
from tracekit.cases.loader import collect_library, load_case, load_cases
from tracekit.cases.yaml_source import MAX_FILE_BYTES, Problem
from tracekit.errors import CaseError

CATALOG = """\
family: test
tools:
  - name: search_flights
    description: 查询航班
    kind: search
    input_schema:
      type: object
      properties:
        origin: {type: string}
        date: {type: string}
        passengers: {type: integer, minimum: 1}
        cabin: {type: string, enum: [economy, business]}
      required: [origin]
      additionalProperties: false
  - name: web_search
    description: 网页搜索
    kind: search
    input_schema: {type: object, properties: {query: {type: string}}, required: [query]}
"""

VALID_CASE = """\
id: B2-PC-02
dimension: B2
category: PC
title: 相对日期
seed: {file: 000_649a87b897009fb0.txt, section: 参数构造准确率, number: 2}
context:
  now: "2026-04-07"
  tools: [search_flights, web_search]
input:
  user: 查下周五北京到上海的机票
expect:
  calls:
    - tool: search_flights
      args:
        origin: {exact: 北京}
        date: {relative_date: 下周五}
scoring: auto
"""


def make_library(tmp_path: Path, case_text: str = VALID_CASE, name: str = "B2-PC-02.yaml") -> Path:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "test.yaml").write_text(CATALOG, encoding="utf-8")
    (tmp_path / "b2").mkdir()
    (tmp_path / "b2" / name).write_text(case_text, encoding="utf-8")
    return tmp_path / "b2" / name


def all_problems(root: Path) -> list[Problem]:
    library, problems = collect_library(root)
    return problems + lint_library(library)


def only_problem(root: Path) -> Problem:
    problems = all_problems(root)
    assert len(problems) == 1, [str(problem) for problem in problems]
    return problems[0]


def test_the_valid_fixture_has_no_problem(tmp_path: Path) -> None:
    make_library(tmp_path)
    assert all_problems(tmp_path) == []
    assert load_cases(tmp_path).get("B2-PC-02").context.tools == ["search_flights", "web_search"]


def test_bad_yaml_names_the_line(tmp_path: Path) -> None:
    path = make_library(tmp_path, VALID_CASE.replace("  user: 查下周五", "  user: [查下周五"))
    problem = only_problem(tmp_path)
    assert problem.file.endswith("B2-PC-02.yaml") and problem.line in (10, 11)
    assert "invalid YAML" in problem.message
    with pytest.raises(CaseError, match=r"B2-PC-02\.yaml:\d+: invalid YAML"):
        load_case(path)


def test_unknown_field(tmp_path: Path) -> None:
    make_library(tmp_path, VALID_CASE.replace("scoring: auto", "scoring: auto\nscorring: judge"))
    problem = only_problem(tmp_path)
    assert (problem.line, problem.field) == (18, None)
    assert problem.message == "unknown field 'scorring'"


def test_unknown_matcher_names_the_argument(tmp_path: Path) -> None:
    path = make_library(tmp_path, VALID_CASE.replace("relative_date:", "relativ_date:"))
    problem = only_problem(tmp_path)
    assert str(problem) == f"{problem.file}:16: expect.calls[0].args.date: unknown matcher 'relativ_date'"
    assert problem.file.endswith(str(Path("b2") / path.name))


def test_wrong_type(tmp_path: Path) -> None:
    make_library(tmp_path, VALID_CASE.replace("number: 2}", "number: two}"))
    problem = only_problem(tmp_path)
    assert (problem.line, problem.field) == (5, "seed.number")
    assert "integer" in problem.message and "'two'" in problem.message


def test_missing_required_field(tmp_path: Path) -> None:
    make_library(tmp_path, VALID_CASE.replace("title: 相对日期\n", ""))
    problem = only_problem(tmp_path)
    assert problem.message == "missing required field 'title'" and problem.line == 1


def test_unknown_tool(tmp_path: Path) -> None:
    text = VALID_CASE.replace("tools: [search_flights, web_search]", "tools: [search_flight, web_search]")
    make_library(tmp_path, text.replace("- tool: search_flights", "- tool: search_flight"))
    problems = all_problems(tmp_path)
    messages = [str(problem) for problem in problems]
    assert any(":8: context.tools[0]: unknown tool 'search_flight'" in message for message in messages), messages
    assert all("search_flight'" in message for message in messages)


def test_duplicate_key(tmp_path: Path) -> None:
    make_library(tmp_path, VALID_CASE.replace("scoring: auto", "scoring: auto\nscoring: judge"))
    problem = only_problem(tmp_path)
    assert problem.line == 18 and "duplicate key 'scoring' (first on line 17)" in problem.message


def test_expected_argument_breaking_the_schema(tmp_path: Path) -> None:
    extra = "\n        passengers: {exact: '1'}\n        seat: {exact: A1}\n        cabin: {exact: first}"
    make_library(tmp_path, VALID_CASE.replace("origin: {exact: 北京}", "origin: {exact: 北京}" + extra))
    problems = {problem.field: problem for problem in all_problems(tmp_path)}
    fields = {f"expect.calls[0].args.{name}" for name in ("passengers", "seat", "cabin")}
    assert set(problems) == fields
    assert "expected integer" in problems["expect.calls[0].args.passengers"].message
    assert "not a parameter of search_flights" in problems["expect.calls[0].args.seat"].message
    assert "'first' is not one of" in problems["expect.calls[0].args.cabin"].message
    assert problems["expect.calls[0].args.seat"].line == 17


def test_relative_date_that_does_not_resolve(tmp_path: Path) -> None:
    make_library(tmp_path, VALID_CASE.replace("下周五}", "下周八}"))
    problem = only_problem(tmp_path)
    assert problem.field == "expect.calls[0].args.date" and "unknown date phrase" in problem.message


def test_intercept_on_a_tool_the_case_does_not_offer(tmp_path: Path) -> None:
    text = VALID_CASE.replace("tools: [search_flights, web_search]", "tools: [search_flights]") + (
        "intercepts:\n  - type: tool_intercept\n    intercept_tool: web_search\n"
        "    inject_tool_result: {is_error: true, content: boom}\n"
    )
    make_library(tmp_path, text)
    problem = only_problem(tmp_path)
    assert (problem.line, problem.field) == (19, "intercepts[0]")
    assert problem.message == "intercept on tool 'web_search' that the case does not offer"


def test_judge_case_without_rubric(tmp_path: Path) -> None:
    make_library(tmp_path, VALID_CASE.replace("scoring: auto", "scoring: auto+judge"))
    problem = only_problem(tmp_path)
    assert (problem.line, problem.field) == (17, "scoring")
    assert "needs judge.rubric" in problem.message


def test_duplicate_ids_and_file_names(tmp_path: Path) -> None:
    make_library(tmp_path)
    (tmp_path / "b2" / "B2-PC-03.yaml").write_text(VALID_CASE, encoding="utf-8")
    messages = [problem.message for problem in all_problems(tmp_path)]
    assert any(message.startswith("duplicate id 'B2-PC-02'") for message in messages)
    assert "file name 'B2-PC-03.yaml' does not match id 'B2-PC-02'" in messages


def test_id_must_agree_with_dimension_and_category(tmp_path: Path) -> None:
    make_library(tmp_path, VALID_CASE.replace("category: PC", "category: TS"))
    problem = only_problem(tmp_path)
    assert problem.message == "category 'TS' does not match id 'B2-PC-02'"


def test_oversized_file_is_refused(tmp_path: Path) -> None:
    make_library(tmp_path, VALID_CASE + "#" * (MAX_FILE_BYTES + 1))
    assert "limit" in only_problem(tmp_path).message


def test_dates_stay_strings_and_python_tags_are_refused(tmp_path: Path) -> None:
    make_library(tmp_path, VALID_CASE.replace("{exact: 北京}", "{exact: 2026-04-17}"))
    case = load_cases(tmp_path).get("B2-PC-02")
    assert case.expect.calls[0].args["origin"].value == "2026-04-17"
    (tmp_path / "b2" / "B2-PC-02.yaml").write_text("!!python/object/apply:os.system [echo hi]\n", encoding="utf-8")
    assert "invalid YAML" in only_problem(tmp_path).message
