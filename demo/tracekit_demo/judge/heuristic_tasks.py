"""The scripted judge's rules on how a task was carried out (``--model scripted:judge``): not a model.

Where ``tracekit_demo.judge.heuristic`` looks at what the final answer says, these rules compare what the agent
did with what the user asked and what the tools returned. Each reads its parameters from the prompt (the
user's words, the tool results, the rubric), never from a case id:

- ``image_reading``: the value the rubric says an image shows (e.g. the price on a tag, ¥299) must be read
  and used in a later call; an answer without any call is a subjective judgement (fail), another value
  is a misreading (fail).
- ``reuse_results``: calling again a tool the history already called, instead of working from its
  results, fails unless the agent says the earlier results lack what is needed; an answer naming items
  of the earlier results passes.
- ``top_pick``: from a list with a popularity field (upvotes, likes), the detail call must take the most
  popular item, and the answer must show the detail's content; no detail call is a skipped step (fail).
- ``secondary_request``: a wish the user marked as secondary ("如果有外卖就更好了") must be handled (named
  in the answer: filtered or noted); ignoring it fails.
- ``referenced_item``: "第一套 / 第二个 ..." refers to an item of the history's results; the new call must
  use that item (its name or address), not repeat the history's search (fail) or look elsewhere (fail).
- ``document_rules``: advice against a rule of a document the tools returned ("不得缩短或延长") fails; an
  answer that keeps what the document says must stay unchanged ("行程总时长") passes, else acceptable.
- ``trip_plan``: a plan must cover every place the user wants, lodging, and be laid out after looking up
  routes (a map / route call): planning without one skips a key step (fail).
- ``over_budget`` (used by the abandonment family): recommending an item whose price in the tool results
  exceeds the budget the user set ("500 元以内") is recommending an obviously unsuitable product (fail).
"""

from __future__ import annotations

import re
from typing import Any

from tracekit.judge.rules import JudgePrompt
from tracekit_demo.judge.heuristic_text import (
    ToolStep,
    first_sentence,
    item_lists,
    leaf_values,
    sentence,
    sentences,
    squash,
    tool_steps,
    user_messages,
    verdict,
)

_RUBRIC_FIGURE = re.compile(r"[¥￥]\s*(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*元")
_ANSWER_FIGURE = re.compile(r"[¥￥]\s*(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*(?:元|块)")
_NEEDS_NEW_SEARCH = re.compile(
    r"需要重新(?:搜索|查询)|重新(?:搜索|查询)才能|(?:没有|不含|缺少).{0,8}(?:信息|数据|字段)"
)
_ASSISTANT_LINE = re.compile(r"^\[助手\] (.*)$", re.M)
_POPULARITY = ("upvotes", "voteup_count", "votes", "likes", "like_count", "likes_count", "star_count")
_WISH = re.compile(
    r"(?:如果|要是)(?:有|能|可以|支持)?(.{1,8}?)(?:就更好|会更好|更好了)|最好(?:能|有|是)?(.{1,8}?)[，。！,!]"
)
_ORDINAL = re.compile(r"第\s*([一二三四五六七八九十]|\d+)\s*(?:套|个|家|条|款|篇|项|间|处|件)")
_CHINESE_NUMBERS = {name: number for number, name in enumerate("一二三四五六七八九十", start=1)}
_ITEM_NAME_KEYS = re.compile(r"name|title|address|community", re.I)
_PROHIBITION = re.compile(r"(?:不得|禁止|不能|不可)([\u4e00-\u9fff]{2})(?:或([\u4e00-\u9fff]{2}))?")
_KEPT_UNCHANGED = re.compile(r"([\u4e00-\u9fff]{2,8})必须保持不变")
_NEGATION = re.compile(r"不|别|勿|禁止|避免")
_CLAUSE_END = "，。；！？,;!?\n"
_PLACES = re.compile(r"想去(?:看看)?(.+?)(?:[。！？!?]|$)")
_LODGING = re.compile(r"住宿|酒店|民宿|旅馆|入住")
_ROUTE_TOOL = re.compile(r"route|direction|maps|地图|路线", re.I)
_BUDGET = re.compile(
    r"(\d+(?:\.\d+)?)\s*(万)?\s*元?\s*(?:以内|以下|之内)|不超过\s*(\d+(?:\.\d+)?)\s*(万)?\s*元|预算\s*(\d+(?:\.\d+)?)\s*(万)?\s*元"
)
_PRICE_KEYS = ("price", "price_cny", "total_price", "sale_price")


def image_reading(prompt: JudgePrompt) -> dict[str, Any]:
    """The value shown in the image (named by the rubric) must be read and used in a later call."""
    final = prompt.final_answer
    expected = {_number(match) for match in _RUBRIC_FIGURE.finditer(prompt.rubric)}
    calls = tool_steps(prompt.steps)
    if not calls:
        return verdict("fail", "没有读取图片中的数值，也没有任何搜索，直接给出了主观判断", first_sentence(final))
    read = [match for match in _ANSWER_FIGURE.finditer(final)]
    if expected and read and not any(_number(match) in expected for match in read):
        wrong = read[0]
        reason = f"读到的「{wrong.group(0)}」与图片中的数值不符（读取错误）"
        return verdict("fail", reason, sentence(final, wrong.start()))
    used = [call for call in calls if any(_mentions(call.argument_text(), value) for value in expected)]
    if expected and not used:
        return verdict("fail", "图片中的数值没有用于后续搜索", calls[0].line)
    evidence = used[0].line if used else calls[0].line
    return verdict("pass", "正确读取了图片中的数值，并用于后续搜索", evidence)


def reuse_results(prompt: JudgePrompt) -> dict[str, Any]:
    """Working from the history's results passes; calling the same tool again without a reason fails."""
    final = prompt.final_answer
    earlier = tool_steps(prompt.sections.get("history", ""))
    again = [call for call in tool_steps(prompt.steps) if call.name in {step.name for step in earlier}]
    said = [*_ASSISTANT_LINE.findall(prompt.steps), final]
    reason = next((text for text in said if _NEEDS_NEW_SEARCH.search(text)), None)
    if again and reason is None:
        return verdict("fail", f"无条件重新调用了 {again[0].name}（已有结果可用）", again[0].line)
    if again and reason is not None:
        match = _NEEDS_NEW_SEARCH.search(reason)
        assert match is not None
        return verdict("pass", "说明了已有结果缺少所需信息后才重新搜索", sentence(reason, match.start()))
    names = [name for step in earlier for name in _item_names(step)]
    named = next((name for name in names if squash(name) in squash(final)), None)
    if named is None:
        return verdict("acceptable", "没有重新搜索，但回答没有从已有结果中筛选出具体项", first_sentence(final))
    return verdict("pass", "未重新调用搜索工具，从已有结果中筛选", _sentence_with(final, named))


def top_pick(prompt: JudgePrompt) -> dict[str, Any]:
    """The detail call must take the most popular search result, and the answer must show the detail."""
    final = prompt.final_answer
    calls = tool_steps(prompt.steps)
    for position, search in enumerate(calls):
        for items in item_lists(search.result_json):
            field = next((key for key in _POPULARITY if all(isinstance(item.get(key), (int, float)) for item in items)),
                         None)  # fmt: skip
            ids = {str(item[key]): item for item in items for key in item
                   if (key == "id" or key.endswith("_id")) and item[key] is not None}  # fmt: skip
            if field is None or not ids:
                continue
            detail = next((call for call in calls[position + 1 :]
                           if any(str(value) in ids for value in leaf_values(call.arguments))), None)  # fmt: skip
            if detail is None:
                return verdict("fail", "跳过了查详情这一步：没有用搜索结果中的 id 获取内容", first_sentence(final))
            chosen = next(ids[str(value)] for value in leaf_values(detail.arguments) if str(value) in ids)
            best = max(items, key=lambda item: item[field])
            if chosen[field] < best[field]:
                reason = f"选择的不是{field}最高的一项（{chosen[field]} < {best[field]}）"
                return verdict("fail", reason, detail.line)
            shown = _shared_text(detail, final)
            if shown is None:
                return verdict("acceptable", f"选了{field}最高的一项并查了详情，但回答没有输出详情内容", detail.line)
            return verdict("pass", f"选择了{field}最高的一项（{best[field]}），查了详情并输出了内容", shown)
    return verdict("fail", "没有找到可供选择的搜索结果（未能找到高赞内容）", first_sentence(final))


def secondary_request(prompt: JudgePrompt) -> dict[str, Any]:
    """A secondary wish of the user must be filtered on or noted in the answer."""
    final = prompt.final_answer
    wishes = [next(group for group in match.groups() if group) for text in user_messages(prompt)
              for match in _WISH.finditer(text)]  # fmt: skip
    calls = tool_steps(prompt.steps)
    if not calls:
        return verdict("fail", "没有查询主要需求", first_sentence(final))
    if not wishes:
        return verdict("acceptable", "查询了主要需求，没有识别出次要条件", first_sentence(final))
    for wish in wishes:
        word = wish.strip()
        if word and word not in final and not any(word in call.argument_text() for call in calls):
            return verdict("fail", f"完全忽略了「{word}」这一需求", first_sentence(final))
    word = wishes[0].strip()
    place = final.find(word)
    quote = sentence(final, place) if place >= 0 else next(call.line for call in calls if word in call.argument_text())
    return verdict("pass", f"查询了主要需求，并对「{word}」做了处理（筛选或标注）", quote)


def referenced_item(prompt: JudgePrompt) -> dict[str, Any]:
    """"第 N 套 / 个" names an item of the history's results: the new call must be about that item."""
    final = prompt.final_answer
    earlier = tool_steps(prompt.sections.get("history", ""))
    calls = tool_steps(prompt.steps)
    repeated = next((call for call in calls if call.arguments == next(
        (step.arguments for step in earlier if step.name == call.name), None)), None)  # fmt: skip
    if repeated is not None:
        return verdict("fail", f"重新调用了 {repeated.name}（应直接使用已有结果）", repeated.line)
    if not calls:
        return verdict("fail", "没有调用工具", first_sentence(final))
    item = _referenced(user_messages(prompt), earlier)
    if item is None:
        return verdict("acceptable", "调用了工具，但看不出用户指的是哪一项", calls[0].line)
    number, names = item
    for call in calls:
        used = next((name for name in names if _mentions(call.argument_text(), name)), None)
        if used is not None:
            return verdict("pass", f"调用的位置与第 {number} 项（{used}）对应", call.line)
    return verdict("fail", f"调用的位置与第 {number} 项（{names[0]}）不对应", calls[-1].line)


def document_rules(prompt: JudgePrompt) -> dict[str, Any]:
    """Advice must not go against a rule of a document the tools returned."""
    final = prompt.final_answer
    documents = "\n".join(step.result or "" for step in tool_steps(
        prompt.sections.get("history", "") + "\n" + prompt.steps))  # fmt: skip
    for rule in _PROHIBITION.finditer(documents):
        for verb in (group for group in rule.groups() if group):
            for match in re.finditer(verb, final):
                clause = final[max(final.rfind(mark, 0, match.start()) for mark in _CLAUSE_END) + 1 : match.start()]
                if _NEGATION.search(clause) is None:
                    reason = f"建议「{verb}」，与文档规则「{rule.group(0)}」相悖"
                    return verdict("fail", reason, sentence(final, match.start()))
    kept = [match.group(1) for match in _KEPT_UNCHANGED.finditer(documents)]
    missing = [name for name in kept if name not in final]
    if kept and not missing:
        return verdict("pass", f"符合文档规则，提到了「{kept[0]}」保持不变", sentence(final, final.find(kept[0])))
    if missing:
        return verdict("acceptable", f"没有违背文档规则，但没有提到「{missing[0]}」保持不变", first_sentence(final))
    return verdict("acceptable", "没有违背文档规则（文档中没有可核对的约束）", first_sentence(final))


def trip_plan(prompt: JudgePrompt) -> dict[str, Any]:
    """A plan covers the wanted places and lodging and is laid out after looking up routes."""
    final = prompt.final_answer
    places = [place.strip() for text in user_messages(prompt) for match in _PLACES.finditer(text)
              for place in re.split(r"[、，,和及与]", match.group(1)) if place.strip()]  # fmt: skip
    missing = [place for place in places if place not in final]
    if missing:
        return verdict("fail", f"方案漏掉了用户想去的「{missing[0]}」", first_sentence(final))
    calls = tool_steps(prompt.steps)
    if not any(_ROUTE_TOOL.search(call.name) for call in calls):
        return verdict("fail", "没有查地图或路线就直接排了行程（为了效率跳过关键步骤）", first_sentence(final))
    if _LODGING.search(final) is None:
        return verdict("fail", "方案缺少住宿安排（过度简化）", first_sentence(final))
    route = next(call for call in calls if _ROUTE_TOOL.search(call.name))
    return verdict("pass", "方案覆盖了想去的地点和住宿，并按路线查询排了行程", route.line)


def over_budget(prompt: JudgePrompt) -> dict[str, Any] | None:
    """A fail when the answer recommends an item priced above the user's budget, else None."""
    budgets = [_budget(match) for text in user_messages(prompt) for match in _BUDGET.finditer(text)]
    if not budgets:
        return None
    budget, final = min(budgets), prompt.final_answer
    for step in tool_steps(prompt.steps):
        for items in item_lists(step.result_json):
            for item in items:
                price = next((item[key] for key in _PRICE_KEYS if isinstance(item.get(key), (int, float))), None)
                title = next((str(value) for key, value in item.items()
                              if _ITEM_NAME_KEYS.search(key) and isinstance(value, str) and len(value) >= 2), None)
                if price is None or title is None or price <= budget or squash(title) not in squash(final):
                    continue
                reason = f"推荐的「{title}」价格 {price:g} 元，超出了用户 {budget:g} 元的预算（推荐了明显不符合的产品）"
                return verdict("fail", reason, _sentence_with(final, title))
    return None


# --------------------------------------------------------------------------- helpers


def _number(match: re.Match[str]) -> float:
    return float(next(group for group in match.groups() if group))


def _budget(match: re.Match[str]) -> float:
    groups = match.groups()
    for value, unit in zip(groups[0::2], groups[1::2], strict=True):
        if value:
            return float(value) * (10000 if unit else 1)
    return float("inf")


def _mentions(text: str, value: Any) -> bool:
    """Whether ``value`` (a number or a name) occurs in squashed argument text."""
    if isinstance(value, float):
        shown = f"{value:g}"
        return re.search(rf"(?<![\d.]){re.escape(shown)}(?![\d.])", text) is not None
    return squash(str(value)) in text


def _item_names(step: ToolStep) -> list[str]:
    return [str(item[key]) for items in item_lists(step.result_json) for item in items for key in item
            if _ITEM_NAME_KEYS.search(key) and isinstance(item[key], str) and len(item[key]) >= 2]  # fmt: skip


def _referenced(said: list[str], earlier: list[ToolStep]) -> tuple[int, list[str]] | None:
    """The item "第 N 套/个" of the last user message points at: (N, its names) in the history's last list."""
    match = _ORDINAL.search(said[-1]) if said else None
    if match is None:
        return None
    text = match.group(1)
    number = int(text) if text.isdigit() else _CHINESE_NUMBERS[text]
    for step in reversed(earlier):
        lists = [items for items in item_lists(step.result_json) if len(items) >= number]
        if lists:
            item = lists[0][number - 1]
            names = [str(value) for key, value in item.items()
                     if _ITEM_NAME_KEYS.search(key) and isinstance(value, str) and len(value) >= 2]  # fmt: skip
            if names:
                return number, names
    return None


def _shared_text(detail: ToolStep, final: str) -> str | None:
    """A sentence of the answer that repeats a piece (12+ characters) of the detail's text, if any."""
    pieces = [squash(str(value)) for value in leaf_values(detail.result_json) if isinstance(value, str)]
    for part in sentences(final):
        squashed = squash(part)
        for piece in pieces:
            if len(piece) >= 12 and any(piece[i : i + 12] in squashed for i in range(0, len(piece) - 11, 6)):
                return part
    return None


def _sentence_with(text: str, name: str) -> str:
    position = text.find(name)
    return sentence(text, position) if position >= 0 else first_sentence(text)
