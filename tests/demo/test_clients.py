"""The demo's model client: the three ``scripted:`` names, what each declines, and the refusal of others."""

from __future__ import annotations

import pytest
from tracekit_demo.clients import JUDGE_MODEL, PolicyClient, RuleJudgeClient

from tracekit.cases import CaseLibrary
from tracekit.clients import ModelUse, model_client
from tracekit.errors import ModelClientError


def test_each_name_has_its_client_and_no_model_needs_a_key() -> None:
    reference, flawed, judge = (model_client(f"scripted:{name}") for name in ("reference", "flawed", "judge"))
    assert isinstance(reference, PolicyClient) and reference.policy == "reference"
    assert isinstance(flawed, PolicyClient) and flawed.policy == "flawed"
    assert isinstance(judge, RuleJudgeClient) and JUDGE_MODEL == "scripted:judge"
    assert all(client.simulated and client.api_key for client in (reference, flawed, judge))


def test_policies_play_agents_and_the_judge_judges(library: CaseLibrary) -> None:
    reference, judge = model_client("scripted:reference"), model_client(JUDGE_MODEL)
    assert reference.declines(ModelUse("agent")) is None
    assert "judge with scripted:judge" in (reference.declines(ModelUse("judge")) or "")
    assert "unknown scripted policy 'judge'" in (judge.declines(ModelUse("agent")) or "")
    assert judge.declines(ModelUse("judge", case=library.get("Q1-TF-01"))) is None
    unjudged = ModelUse("judge", case=library.get("B2-TS-01"))
    assert judge.declines(unjudged) == "the scripted judge has no rule for B2-TS-01"


def test_a_policy_answers_one_case_at_a_time(library: CaseLibrary) -> None:
    client = model_client("scripted:flawed")
    with pytest.raises(ModelClientError, match="one case at a time"):
        client.open(ModelUse("agent"))
    with client.open(ModelUse("agent", case=library.get("C4-LD-01"), catalog=library.catalog)) as endpoint:
        assert endpoint.url.startswith("http://127.0.0.1:")
        assert endpoint.meta["policy"]["name"] == "flawed" and endpoint.meta["policy"]["failure"]


def test_other_scripted_names_are_refused() -> None:
    with pytest.raises(ModelClientError, match="unknown scripted policy 'perfect'"):
        model_client("scripted:perfect")
