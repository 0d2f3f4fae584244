"""One session under the guard, fed canonical messages directly: every budget, when it fires, and the
decisions it leads to (the proxy tests show the same through the SDKs)."""

from __future__ import annotations

from typing import Any

from tracekit.analyze.detectors import detect
from tracekit.guard import GuardConfig, GuardSession
from tracekit.trace import Trace, TraceBuilder
from tracekit.trace.models import Header, ModelCall, Usage


def session_of(config: dict[str, Any]) -> GuardSession:
    guard = GuardConfig.model_validate(config)
    return GuardSession("s", guard, guard.detector_options(), started=1000.0)


def reply(call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": "lookup", "input": arguments}]}


def result(call_id: str, text: str, error: bool = False) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text,
                                         "is_error": error}]}  # fmt: skip


def run(session: GuardSession, turns: list[tuple[dict[str, Any], str, bool]], start: float = 1000.0) -> list[Any]:
    """Requests and answers in turn (one second apart); the verdict of each request."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "查"}]
    verdicts = []
    for number, (arguments, text, error) in enumerate(turns):
        now = start + number
        verdicts.append(session.on_request(messages, None, now))
        answer = reply(f"t{number}", arguments)
        refused = verdicts[-1].refusal is not None
        session.on_answer(answer, Usage(input_tokens=10, output_tokens=5), now, refused=refused)
        messages = [*messages, answer, result(f"t{number}", text, error)]
    verdicts.append(session.on_request(messages, None, start + len(turns)))
    return verdicts


def test_each_budget_fires_at_the_first_request_over_it_once() -> None:
    cases = {
        "tool_calls": ({"limit": 2, "action": "warn"}, 3, {"used": 3, "limit": 2}),
        "errors": ({"limit": 1, "action": "warn"}, 3, {"used": 2, "limit": 1}),
        "seconds": ({"limit": 2.5, "action": "record"}, 3, {"used": 3.0, "limit": 2.5}),
        "tokens": ({"limit": 30, "action": "record"}, 3, {"used": 45, "limit": 30}),
        "model_calls": ({"limit": 3, "action": "stop"}, 3, {"used": 4, "limit": 3}),
    }
    for name, (budget, fired_at, figures) in cases.items():
        session = session_of({"budgets": {name: budget}})
        turns = [({"q": n}, "坏了" if n else "好", n > 0) for n in range(5)]
        verdicts = run(session, turns)
        fired = [(i, event) for i, verdict in enumerate(verdicts) for event in verdict.events if event.rule == name]
        assert [i for i, _ in fired] == [fired_at], name
        event = fired[0][1]
        assert (event.event, event.action, event.figures) == ("budget", budget["action"], figures), name


def test_warn_makes_a_note_and_stop_a_refusal_that_sticks() -> None:
    warned = run(session_of({"budgets": {"tool_calls": {"limit": 1, "action": "warn"}}}), [({"q": 1}, "好", False)] * 3)
    assert [v.note is not None for v in warned] == [False, False, True, False]
    assert warned[2].note == "tracekit guard: the session used 2 tool calls, over its budget of 1."
    stopped = run(session_of({"budgets": {"model_calls": {"limit": 1}}}), [({"q": n}, "好", False) for n in range(3)])
    assert [v.refusal is not None for v in stopped] == [False, True, True, True]
    assert stopped[1].refusal == stopped[3].refusal
    assert "rule model_calls, used 2, limit 1" in (stopped[1].refusal or "")


def test_the_sessions_findings_at_the_end_are_the_offline_ones() -> None:
    session = session_of({})
    run(session, [({"q": 1}, "好", False)] * 3)  # the same call three times: repeated_call
    (finding,) = session.finish()
    assert (finding.kind, finding.calls) == ("repeated_call", [0, 1, 2])
    assert session.status(1010.0)["seconds"] == 10.0


def test_only_acted_on_findings_are_looked_for_before_the_request_is_answered() -> None:
    """A finding the guard file acts on is raised by the request that settles its calls, before it is
    answered; one it only records is raised once that request's answer went out (written with the same
    exchange). With nothing acted on, the request's messages are read only after its answer."""
    loop = [({"q": 1}, "好", False)] * 3  # a call repeated after it succeeded (raised at 2 calls, grown at 3)
    for action, stage in (("warn", "request"), ("record", "answer")):
        session = session_of({"findings": {"repeated_call": {"action": action}}})
        messages: list[dict[str, Any]] = [{"role": "user", "content": "查"}]
        raised: list[tuple[int, str, str]] = []
        for number, (arguments, text, error) in [*enumerate(loop), (3, ({}, "", False))]:
            before = session.builder.message_count
            verdict = session.on_request(messages, None, 1000.0 + number)
            read_early = session.builder.message_count > before
            raised += [(number, "request", event.rule) for event in verdict.events]
            answer = reply(f"t{number}", arguments) if number < 3 else {"role": "assistant", "content": "好了"}
            events = session.on_answer(answer, Usage(input_tokens=1), 1000.0 + number, refused=False)
            raised += [(number, "answer", event.rule) for event in events]
            assert read_early == (action == "warn"), (action, number)
            messages = [*messages, answer, result(f"t{number}", text, error)]
        assert raised == [(2, stage, "repeated_call"), (3, stage, "repeated_call")], action
        (finding,) = session.finish()
        assert (finding.kind, finding.calls) == ("repeated_call", [0, 1, 2])


def test_a_session_without_tool_calls_gets_the_offline_findings_too() -> None:
    """Detectors that read the agent's text find a pattern in a session that never called a tool."""
    config = {"detectors": {"repeated_text": {"reset_on_user_message": False}}}
    session = session_of(config)
    offline = TraceBuilder(Header(trace_id="s", source="test"))
    messages: list[dict[str, Any]] = [{"role": "user", "content": "帮我订票"}]
    for number in range(4):
        session.on_request(messages, None, 1000.0 + number)
        offline.add_conversation(messages)
        answer = {"role": "assistant", "content": "抱歉，我暂时无法完成，请稍后再试。"}
        session.on_answer(answer, Usage(input_tokens=1), 1000.0 + number, refused=False)
        offline.add_model_call(ModelCall(index=0, provider="test"), answer)
        messages = [*messages, answer, {"role": "user", "content": f"再试一次 {number}"}]
    header, *records = offline.records
    _, expected = detect(Trace(header=header, records=records), GuardConfig.model_validate(config).detector_options())
    assert [f.kind for f in expected] == ["repeated_text"]
    assert [f.to_dict() for f in session.finish()] == [f.to_dict() for f in expected]
