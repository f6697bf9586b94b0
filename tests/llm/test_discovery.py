"""Providers whose models are discovered at run time, and classification dispatch, in the
registry (plugin functions stand in for a server; the llama.cpp tests use a real one)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from knightcode._errors import UsageError
from knightcode._llm.classify import (
    BoolQuestion,
    Classification,
    ClassificationError,
    ClassifyRequest,
    answer_from_probabilities,
)
from knightcode._llm.discovery import DiscoveredModels, DiscoveryError, ProviderAccess
from knightcode._llm.registry import ModelRegistry
from knightcode._llm.types import Model
from knightcode._plugins.definitions import ProviderDefinition

from .conftest import collect, user_context


class LiveServer:
    """What a discovering provider's server says, changeable between look-ups."""

    def __init__(self) -> None:
        self.models = ["m1"]
        self.windows: dict[str, int] = {"m1": 4096}
        self.down = False
        self.calls: list[ProviderAccess] = []
        self.classified: list[tuple[str, ClassifyRequest]] = []

    async def discover(self, access: ProviderAccess) -> DiscoveredModels:
        self.calls.append(access)
        await asyncio.sleep(0)
        if self.down:
            raise DiscoveryError("server down: start it")
        models = [self.model(model_id, "chat") for model_id in self.models]
        models.append(self.model("judge", "classifier"))
        return DiscoveredModels(models, {"cold": "not loaded: load it first"})

    def model(self, model_id: str, kind: str) -> Model:
        return Model(
            "live",
            model_id,
            model_id,
            "openai-completions",
            "http://x/v1",
            context_window=self.windows.get(model_id, 1000),
            kind="classifier" if kind == "classifier" else "chat",
        )

    async def classify(
        self, model: Model, request: ClassifyRequest, access: ProviderAccess
    ) -> Classification:
        self.classified.append((model.id, request))
        answers = {
            qid: answer_from_probabilities(q, [0.9, 0.1], request.temperature)
            for qid, q in request.questions.items()
        }
        return Classification(model, answers, input_tokens=7)


def registry_for(server: LiveServer, agent_dir: Path, **environ: str) -> ModelRegistry:
    definition = ProviderDefinition(
        name="live",
        api="openai-completions",
        env_keys=("LIVE_KEY",),
        discover=server.discover,
        classify=server.classify,
    )
    return ModelRegistry(agent_dir, providers=[definition], environ=environ)


async def test_lookups_discover_lazily_and_again_on_a_miss(agent_dir: Path) -> None:
    server = LiveServer()
    registry = registry_for(server, agent_dir, LIVE_KEY="k1")
    assert server.calls == []  # building the registry asks nobody
    assert (await registry.resolve("live/m1")).context_window == 4096
    assert len(server.calls) == 1 and server.calls[0].api_key == "k1"  # env_keys give the key
    assert server.calls[0].agent_dir == agent_dir
    server.models.append("m2")
    assert (await registry.resolve("live/m2")).id == "m2"  # a miss asks again: the server changed
    assert (await registry.find("live", "m1")) is not None and len(server.calls) == 2
    server.models.append("m3")
    assert (await registry.find("live", "m3")) is not None and len(
        server.calls
    ) == 3  # find misses too
    assert [m.id for m in registry.classifiers] == ["judge"]
    assert "judge" not in {m.id for m in registry.models}  # classifiers are not chat models


async def test_unavailable_and_failing_providers_say_why(agent_dir: Path) -> None:
    server = LiveServer()
    registry = registry_for(server, agent_dir)
    with pytest.raises(
        UsageError, match="model live/cold cannot be used: not loaded: load it first"
    ):
        await registry.resolve("live/cold")
    assert (await registry.find("live", "cold")) is None
    assert registry.unavailable_reason("live", "cold") == "not loaded: load it first"
    assert registry.unavailable_reason("live", "m1") is None
    server.down = True
    with pytest.raises(UsageError, match="live/m9 cannot be used: server down: start it"):
        await registry.resolve("live/m9")
    assert registry.discovery_errors == {"live": "server down: start it"}
    assert (await registry.find("live", "m1")) is None  # a server that is down serves nothing


async def test_refresh_models_updates_windows(agent_dir: Path) -> None:
    server = LiveServer()
    registry = registry_for(server, agent_dir)
    await registry.refresh_models()

    def window() -> int | None:
        found = registry.find_known("live", "m1")
        return found.context_window if found is not None else None

    assert window() == 4096
    server.windows["m1"] = 2048
    await registry.refresh_models(["live"])
    assert window() == 2048
    registry.refresh()  # re-reading models.json keeps what was discovered
    assert (await registry.find("live", "m1")) is not None


async def test_plugin_bugs_are_contained(agent_dir: Path) -> None:
    async def broken(access: ProviderAccess) -> Any:
        return ["not", "a", "result"]

    registry = ModelRegistry(agent_dir, providers=[ProviderDefinition(name="odd", discover=broken)])
    await registry.refresh_models()
    assert "discover() returned list" in registry.discovery_errors["odd"]


async def test_classify_dispatches_to_the_provider(agent_dir: Path) -> None:
    server = LiveServer()
    registry = registry_for(server, agent_dir)
    result = await registry.classify(
        "live/judge", {"s": 1}, {"q": BoolQuestion("ok?")}, temperature=2.0
    )
    assert result.model.id == "judge" and result.input_tokens == 7
    ((model_id, request),) = server.classified
    assert (model_id, request.state, request.temperature) == ("judge", {"s": 1}, 2.0)
    with pytest.raises(ClassificationError, match="unknown classifier 'live/m1'"):
        await registry.classify("live/m1", {}, {"q": BoolQuestion("ok?")})
    with pytest.raises(ClassificationError, match="is a chat model"):
        await registry.classify(await registry.resolve("live/m1"), {}, {"q": BoolQuestion("ok?")})


async def test_a_classifier_cannot_chat(agent_dir: Path) -> None:
    server = LiveServer()
    registry = registry_for(server, agent_dir)
    (judge,) = [m for m in (await _refreshed(registry)).classifiers]
    events = await collect(registry.stream(judge, user_context()))
    assert events[-1]["type"] == "error"
    assert "is a classifier" in events[-1]["error"]["errorMessage"]


async def _refreshed(registry: ModelRegistry) -> ModelRegistry:
    await registry.refresh_models()
    return registry
