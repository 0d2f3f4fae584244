"""The shipped case library (cases/): every case loads, lints clean, and fits the tool catalog."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tracekit.cases.lint import image_path, lint_library
from tracekit.cases.loader import CaseLibrary, collect_library
from tracekit.cases.tool_schema import check_value, property_schema

CASES_DIR = Path(__file__).resolve().parents[2] / "cases"

#: Case ids of DESIGN.md "Contracts": prefix -> count.
CONTRACT_IDS = {
    "B2-TS": 6, "B2-PC": 8, "B2-TC": 7, "B2-FR": 5, "B2-RC": 5, "B2-MM": 5,
    "Q3-ST": 4, "Q3-TC": 3, "Q3-RC": 3, "Q3-OR": 4, "Q3-OE": 3,
    "Q1-TF": 5, "Q1-KB": 5, "Q1-RF": 4, "Q1-UE": 4, "Q1-CC": 2, "Q1-MM": 3,
    "C4-LD": 3, "C4-DR": 2, "C4-PA": 4, "C4-AR": 3, "TT": 8,
}  # fmt: skip
ALL_CONTRACT_IDS = {f"{prefix}-{n:02d}" for prefix, count in CONTRACT_IDS.items() for n in range(1, count + 1)}


@pytest.fixture(scope="module")
def library() -> CaseLibrary:
    library, problems = collect_library(CASES_DIR)
    assert problems == [], "\n".join(map(str, problems))
    return library


def test_every_case_lints_clean(library: CaseLibrary) -> None:
    problems = lint_library(library)
    assert problems == [], "\n".join(map(str, problems))


def test_ids_are_contract_ids_and_b2_is_complete(library: CaseLibrary) -> None:
    ids = set(library.cases)
    assert ids <= ALL_CONTRACT_IDS, sorted(ids - ALL_CONTRACT_IDS)
    assert {case_id for case_id in ALL_CONTRACT_IDS if case_id.startswith("B2-")} <= ids


def test_numbering_follows_each_seed_section(library: CaseLibrary) -> None:
    by_section: dict[tuple[str, str], list[int]] = {}
    for case in library:
        assert int(case.id[-2:]) == case.seed.number, case.id
        by_section.setdefault((case.seed.file, case.seed.section), []).append(case.seed.number)
    for numbers in by_section.values():
        assert sorted(numbers) == list(range(1, len(numbers) + 1))


def test_expected_arguments_validate_against_the_tool_schemas(library: CaseLibrary) -> None:
    checked = 0
    for case in library:
        for call in case.expect.calls:
            schemas = [library.catalog[name].input_schema for name in call.tools]
            for arg, matcher in call.args.items():
                candidates = [property_schema(schema, arg) for schema in schemas]
                assert any(candidate is not None for candidate in candidates), (case.id, arg)
                values = {"exact": [matcher.value], "one_of": matcher.value}.get(matcher.kind, [])
                for value in values:
                    assert any(
                        candidate is not None and not check_value(candidate, value) for candidate in candidates
                    ), (case.id, arg, value)
                    checked += 1
    assert checked > 20


def test_every_intercept_names_a_tool_the_case_offers(library: CaseLibrary) -> None:
    intercepted = 0
    for case in library:
        for name in case.intercepted_tool_names():
            assert name in case.context.tools, (case.id, name)
            assert name in library.catalog, (case.id, name)
            intercepted += 1
    assert intercepted >= 5


def test_history_tool_uses_are_answered_and_offered(library: CaseLibrary) -> None:
    for case in library:
        pending: set[str] = set()
        for message in case.input.messages:
            if not isinstance(message["content"], list):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    assert block["name"] in case.context.tools, (case.id, block["name"])
                    pending.add(block["id"])
                elif block.get("type") == "tool_result":
                    pending.discard(block["tool_use_id"])
        assert not pending, (case.id, pending)


def test_judge_cases_have_rubrics_and_skills_exist(library: CaseLibrary) -> None:
    for case in library:
        if case.uses_judge:
            assert case.judge is not None and case.judge.rubric.strip(), case.id
        for group in case.skills.groups.values():
            for skill in group.active_skills:
                assert skill in library.skills, (case.id, skill)


def test_multimodal_cases_reference_local_images(library: CaseLibrary) -> None:
    for case in library:
        if case.category == "MM":
            assert case.input.images, case.id
        for image in case.input.images:
            path = image_path(library, image.path)
            assert path is not None and path.stat().st_size < 100_000, (case.id, image.path)


def test_b2_seed_text_is_carried_verbatim(library: CaseLibrary) -> None:
    # Spot checks against seed 000 (copied here from the seed text).
    pc08 = library.get("B2-PC-08")
    assert pc08.input.messages[-1] == {"role": "user", "content": "不对，我说的是 5 月 10 号"}
    fr02 = library.get("B2-FR-02")
    content = fr02.intercepts[0].inject_tool_result.content  # type: ignore[union-attr]
    assert json.loads(str(content))["error"] == "MISSING_REQUIRED_PARAMETER"
    assert library.get("B2-TS-01").input.user == "查一下明天北京飞成都的机票，一个人"
    group_b = library.get("B2-TC-07").skills.B
    assert group_b is not None and group_b.active_skills == ["house_hunting_skill", "local_services_skill"]


def test_chinese_text_has_no_escape_sequences(library: CaseLibrary) -> None:
    for case in library:
        text = json.dumps(case.model_dump(mode="json", by_alias=True), ensure_ascii=False)
        assert not re.search(r"\\u[0-9a-f]{4}", text), case.id


def test_readme_table_is_up_to_date() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_readme", CASES_DIR / "make_readme.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.render(CASES_DIR)
    assert (CASES_DIR / "README.md").read_text(encoding="utf-8") == expected, "run: python cases/make_readme.py"
    for case_id in ("B2-TS-01", "B2-MM-05"):
        assert f"| {case_id} | `000_649a87b897009fb0.txt` |" in expected


# --------------------------------------------------------------------------- the seeds' exact rules (issue 16)

#: Tool families the seeds name in words, for the audit of forbidden tools.
SEED_TOOL_WORDS = {
    "maps_": ("高德地图", "maps 相关工具", "地图"),
    "compute_google_maps_": ("Google Maps",),
    "weibo_": ("微博", "社交媒体"),
    "zhihu_": ("知乎", "社交媒体"),
    "xiaohongshu_": ("小红书", "社交媒体"),
    "taobao_search_by_image": ("图片搜索",),
    "beike_search_resale_housing": ("房源搜索",),
    "taobao_search_products": ("重新搜索",),
    "weibo_get_post_detail": ("get_post_detail",),
}
#: A Fail clause that counts calls, steps, tokens or retries.
COUNTED = re.compile(r"(超过|>|≥|<)\s*\d+|\d+\s*(次|步)及以上|\d+\s*次以上")
#: Pass lines "A 或 B" whose branches one machine check covers (reviewed), or that the judge decides.
ONE_CHECK_COVERS_BOTH = {
    "B2-RC-02": "tool_counts max 2 covers 未调用 and 1-2 次",
    "B2-FR-03": "both branches end in maps_weather for 北京 (the required call); recovery accepts retry and fallback",
    "B2-MM-01": "one_of_tools covers image and text search",
    "TT-01": "the tiers make calculator and code_executor best",
    "TT-03": "或 is inside one parameter rule (time range or entity), one regex",
    "Q1-MM-03": "answer contains 299 covers 「299 元」 and 「¥299」",
    "Q3-RC-01": "call_count max 1 covers 0 and 1 calls",
    "C4-LD-01": "或 joins what the agent offers after stopping (judge); the counts are machine-checked",
    "C4-DR-01": "或 joins the exit explanation or alternative (judge); asks are machine-checked",
    "C4-DR-02": "或 joins degradation or explanation (judge); retries are machine-checked",
    "C4-AR-03": "或 joins degradation or retry advice (judge); calls after failure are machine-checked",
    "C4-PA-04": "或 joins 说明 or 补充 of Bose's gaps (judge); keeping Bose is machine-checked",
    "C4-AR-01": "或 joins 正确的信息 or 替代路径 (judge); a made-up flight number is machine-checked",
}


def test_forbidden_tools_are_named_by_the_seed(library: CaseLibrary) -> None:
    # A constraint the seed does not state is advisory (NOT SEED TEXT), never a failing check.
    for case in library:
        seed_text = " ".join([*case.expected_behaviour, case.criteria.pass_ if case.criteria else "",
                              case.criteria.fail if case.criteria else ""])  # fmt: skip
        if case.dimension == "TT":
            continue  # the trap cases are built for this library from the article (cases/traps/SCORING.md)
        for tool in case.expect.forbidden_tools:
            words = [w for prefix, ws in SEED_TOOL_WORDS.items() if tool.startswith(prefix) for w in ws]
            assert tool in seed_text or any(word in seed_text for word in words), (case.id, tool)


def test_counted_fail_clauses_have_machine_checks(library: CaseLibrary) -> None:
    counts = ("call_count", "tool_counts", "output_tokens", "retries", "asks", "loop_repeats", "attempts",
              "max_retries", "calls_after_failure", "efficiency_score")  # fmt: skip
    for case in library:
        if case.criteria is None or not COUNTED.search(case.criteria.fail):
            continue
        if case.id == "Q3-OR-04":
            continue  # 冗余内容占比 > 30%: a share of the answer's content, which needs judgement
        assert case.scoring != "judge", case.id
        assert any(getattr(case.expect, name) for name in counts), case.id


def test_pass_lines_with_two_branches_check_both(library: CaseLibrary) -> None:
    for case in library:
        if case.criteria is None or "或" not in case.criteria.pass_ or case.scoring == "judge":
            continue
        assert case.expect.either or case.id in ONE_CHECK_COVERS_BOTH, case.id
    assert [branch.label for branch in library.get("Q1-KB-04").expect.either] == [
        "调用了 web_search", "明确说明无法提供（训练数据限制）",
    ]  # fmt: skip


def test_q3_oe_01_is_graded_by_the_seeds_formula(library: CaseLibrary) -> None:
    case = library.get("Q3-OE-01")
    assert case.criteria is not None and case.criteria.pass_ == "效率得分 ≥ 80"
    rule = case.expect.efficiency_score
    assert rule is not None and (rule.optimal_steps, rule.optimal_tokens) == (1, 150)
    assert (rule.tiers.grade(80), rule.tiers.grade(79.9), rule.tiers.grade(59.9)) == ("pass", "acceptable", "fail")
    assert case.expect.call_count is None and case.expect.output_tokens is None  # no second, contradicting grade


def test_a_weekday_the_seed_states_is_carried(library: CaseLibrary) -> None:
    seeds = CASES_DIR.parent / ".." / "shared" / "seeds"
    if not seeds.is_dir():
        pytest.skip("the seeds (../shared/seeds) are not beside the repository")
    text = (seeds / "000_649a87b897009fb0.txt").read_text(encoding="utf-8")
    assert text.count("当前日期为 2026-04-07（周一）") == 2
    for case_id in ("B2-PC-02", "B2-PC-07"):
        case = library.get(case_id)
        assert (str(case.context.now), case.context.weekday) == ("2026-04-07", "周一")
