"""The model-client registry: prefixes by decorator, entry points loaded only for unknown prefixes, a model
API for everything else."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from importlib.metadata import EntryPoint, EntryPoints
from typing import Any

import pytest

import tracekit.clients as clients_package
from tracekit.clients import (
    DEFAULT_UPSTREAMS,
    ENTRY_POINT_GROUP,
    ApiModelClient,
    Endpoint,
    ModelClient,
    ModelUse,
    model_client,
    model_client_prefixes,
    register_model_client,
    registry,
)
from tracekit.errors import ModelClientError


class Recorded(ModelClient):
    """A client that keeps the name it was made for."""

    def __init__(self, model: str) -> None:
        self.model = model

    def open(self, use: ModelUse) -> Endpoint:
        return Endpoint(f"http://127.0.0.1:9/{self.model}")


def not_a_client(model: str) -> object:
    return object()


class Installed:
    """The entry points a test installs, and the prefixes the registry looked up among them."""

    def __init__(self) -> None:
        self.points: list[EntryPoint] = []
        self.lookups: list[str] = []

    def add(self, name: str, value: str) -> None:
        self.points.append(EntryPoint(name, value, ENTRY_POINT_GROUP))

    def entry_points(self, *, group: str, name: str | None = None) -> EntryPoints:
        assert group == ENTRY_POINT_GROUP
        if name is not None:
            self.lookups.append(name)
        return EntryPoints(point for point in self.points if name is None or point.name == name)


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Installed]:
    """A clean registry whose installed entry points are the test's own."""
    monkeypatch.setattr(registry, "_factories", {})
    monkeypatch.setattr(registry, "_not_installed", set())
    fake = Installed()
    monkeypatch.setattr(registry, "entry_points", fake.entry_points)
    yield fake


def test_names_without_a_registered_prefix_go_to_a_model_api(installed: Installed) -> None:
    for name in ("claude-sonnet-4-5", "llama3:8b", "gpt-4.1"):
        assert isinstance(model_client(name), ApiModelClient)
    api = model_client("claude-sonnet-4-5")
    assert api.open(ModelUse("agent")).url == DEFAULT_UPSTREAMS["anthropic"]
    assert api.open(ModelUse("judge", provider="openai")).url == DEFAULT_UPSTREAMS["openai"]
    assert api.open(ModelUse("agent", base_url="http://127.0.0.1:8000/v1")).url == "http://127.0.0.1:8000/v1"
    assert (api.simulated, api.api_key, api.declines(ModelUse("agent"))) == (False, None, None)
    assert installed.lookups == ["llama3"]  # only a name with a prefix is looked up, once


def test_a_decorated_factory_serves_its_prefix_and_a_later_one_replaces_it(installed: Installed) -> None:
    register_model_client("mine")(Recorded)
    client = model_client("mine:small")
    assert isinstance(client, Recorded) and client.model == "mine:small"
    with client.open(ModelUse("agent")) as endpoint:
        assert endpoint.url == "http://127.0.0.1:9/mine:small" and endpoint.errors() == [] and endpoint.meta == {}

    @register_model_client("mine")
    def other(model: str) -> ModelClient:
        return ApiModelClient()

    assert isinstance(model_client("mine:small"), ApiModelClient)
    assert installed.lookups == []  # a registered prefix never looks at entry points
    assert model_client_prefixes() == ["mine"]


@pytest.mark.parametrize("prefix", ["", "a:b", " x"])
def test_a_prefix_is_one_word(prefix: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        register_model_client(prefix)


def test_an_entry_point_is_loaded_the_first_time_its_prefix_is_asked_for(installed: Installed) -> None:
    installed.add("rec", f"{__name__}:Recorded")
    assert model_client_prefixes() == ["rec"]  # listed without loading
    assert installed.lookups == []

    first = model_client("rec:a")
    second = model_client("rec:b")

    assert isinstance(first, Recorded) and (first.model, second.model) == ("rec:a", "rec:b")  # type: ignore[attr-defined]
    assert installed.lookups == ["rec"]  # loaded once, then registered


def test_an_entry_point_that_cannot_be_loaded_is_named(installed: Installed) -> None:
    installed.add("gone", "no_such_package_tracekit.clients:factory")
    with pytest.raises(ModelClientError, match=r"'gone' is installed as 'no_such_package_tracekit.clients:factory'"):
        model_client("gone:x")


def test_a_factory_that_makes_no_client_is_refused(installed: Installed) -> None:
    installed.add("odd", f"{__name__}:not_a_client")
    with pytest.raises(ModelClientError, match=r"model .odd:x.*not a ModelClient"):
        model_client("odd:x")


def test_a_factory_may_refuse_a_name(installed: Installed) -> None:
    @register_model_client("strict")
    def strict(model: str) -> Any:
        raise ModelClientError(f"unknown model {model!r}")

    with pytest.raises(ModelClientError, match="unknown model 'strict:x'"):
        model_client("strict:x")


def test_the_documented_example_works_as_written(installed: Installed, monkeypatch: pytest.MonkeyPatch) -> None:
    """The extension point's example in ``tracekit.clients``' docstring, run as it is printed there."""
    doc = clients_package.__doc__ or ""
    start = doc.index("    import os\n")
    example = textwrap.dedent(doc[start:doc.index("``tracekit run CASES", start)])
    exec(compile(example, "tracekit.clients docstring", "exec"), {"__name__": "documented_example"})
    assert "local" in model_client_prefixes()
    client = model_client("local:qwen3")
    assert (type(client).__name__, client.api_key) == ("LocalServer", "no-key")
    monkeypatch.delenv("LOCAL_MODEL_URL", raising=False)
    assert client.open(ModelUse("agent", provider="openai")).url == "http://127.0.0.1:8000/v1"
    monkeypatch.setenv("LOCAL_MODEL_URL", "http://127.0.0.1:9999/v1")
    assert client.open(ModelUse("judge", provider="openai")).url == "http://127.0.0.1:9999/v1"
