"""What an agent starts from: case selection, system prompt, first messages, mock tools, job names."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tracekit.analyze.binding import history_length
from tracekit.cases.loader import CaseLibrary
from tracekit.errors import CaseError
from tracekit.runner.conversation import agent_start, initial_messages, system_prompt
from tracekit.runner.jobs import case_groups, plan_jobs, select_cases
from tracekit.runner.mock_tools import MockToolExecutor

ROOT = Path(__file__).resolve().parents[2]


def test_selection_by_id_prefix_all_and_file(library: CaseLibrary) -> None:
    ids = [case.id for case in select_cases(library, ["B2-TS"])]
    assert ids == [f"B2-TS-0{n}" for n in range(1, 7)]
    assert [case.id for case in select_cases(library, ["TT-01", "B2-TS-02", "TT-01"])] == ["B2-TS-02", "TT-01"]
    assert len(select_cases(library, ["all"])) == len(library)
    by_file = select_cases(library, [str(ROOT / "cases" / "c4" / "C4-LD-01.yaml")])
    assert [case.id for case in by_file] == ["C4-LD-01"]
    with pytest.raises(CaseError, match="no case matches 'ZZ-99'"):
        select_cases(library, ["ZZ-99"])


def test_system_prompt_carries_date_weekday_and_only_group_b_skills(library: CaseLibrary) -> None:
    case = library.get("B2-TS-01")
    group_a = system_prompt(case, case.skills.A, library.skills)
    group_b = system_prompt(case, case.skills.B, library.skills)
    assert "2026-04-07（星期二）" in group_a
    assert "flight_booking_skill" not in group_a
    assert '<skill name="flight_booking_skill">' in group_b
    assert library.skills["flight_booking_skill"].strip()[:40] in group_b


def test_context_lines_reach_the_agent_but_notes_for_case_authors_do_not(library: CaseLibrary) -> None:
    assert "已知 city_id 为 110000（北京）" in system_prompt(library.get("B2-PC-05"))
    author_note = library.get("C4-PA-03").context.notes
    assert author_note and "种子" in author_note
    assert author_note not in system_prompt(library.get("C4-PA-03"))


def test_history_then_user_message_is_k_messages(library: CaseLibrary) -> None:
    for case in library:
        if case.input.images:
            continue
        messages = initial_messages(case, library.root)
        assert len(messages) == history_length(case), case.id
        assert messages[: len(case.input.messages)] == case.input.messages


def test_images_become_base64_blocks_before_the_text(library: CaseLibrary) -> None:
    case = library.get("Q1-MM-03")
    (message,) = initial_messages(case, library.root)
    image, text = message["content"]
    assert text == {"type": "text", "text": case.input.user}
    assert image["source"]["media_type"] == "image/png"
    png = (library.root / case.input.images[0].path).read_bytes()
    assert base64.b64decode(image["source"]["data"]) == png


def test_a_missing_image_is_an_error_naming_it(library: CaseLibrary, tmp_path: Path) -> None:
    with pytest.raises(CaseError, match=r"q1_foggy_shrine\.png not found"):
        initial_messages(library.get("Q1-MM-01"), tmp_path)


def test_mock_tools_answer_like_the_catalog(library: CaseLibrary) -> None:
    case = library.get("B2-PC-03")
    tools = MockToolExecutor.for_case(library.catalog, case.context.tools)
    assert [tool["name"] for tool in tools.tool_params()] == case.context.tools
    assert tools.run("beike_lookup_city_id", {"city_name": "上海"}).content.startswith('{"city_id": 310000')
    rendered = tools.run("search_hotels", {"city": "成都"})
    assert "成都春熙路亚朵酒店" in rendered.content and not rendered.is_error
    unknown = tools.run("book_flight", {})
    assert unknown.is_error and "unknown tool 'book_flight'" in unknown.content
    assert tools.run("beike_lookup_city_id", "not an object").is_error


def test_agent_start_offers_the_case_tools_in_order(library: CaseLibrary) -> None:
    case = library.get("C4-LD-01")
    tools = MockToolExecutor.for_case(library.catalog, case.context.tools)
    start = agent_start(case, case.skills.A, tools.tool_params(), library.skills, library.root)
    assert [tool["name"] for tool in start.tools] == ["search_flights", "web_search"]
    assert start.messages == [{"role": "user", "content": "查一下下周五北京到上海的机票"}]


def test_jobs_cover_each_defined_group_and_repeat(library: CaseLibrary) -> None:
    cases = select_cases(library, ["B2-TS-01", "Q1-RF-02", "TT-01"])
    assert case_groups(library.get("Q1-RF-02"), ["A"]) == []
    jobs = plan_jobs(cases, None, 2)
    assert [job.name for job in jobs] == [
        "B2-TS-01__A__r0", "B2-TS-01__A__r1", "B2-TS-01__B__r0", "B2-TS-01__B__r1",
        "Q1-RF-02__B__r0", "Q1-RF-02__B__r1", "TT-01__-__r0", "TT-01__-__r1",
    ]
    assert [job.name for job in plan_jobs(cases, ["A"], 1)] == ["B2-TS-01__A__r0", "TT-01__-__r0"]
