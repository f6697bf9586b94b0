"""Built-in providers: the model catalogue shipped as package data (``catalogue.json``).

The catalogue (context window, max output, input kinds, reasoning, prices, API, base URL of some
nine hundred hosted models) is generated from the reference's npm package by
``scripts/model_catalogue.py``; it is data, never edited by hand. Each provider entry has the
shape of a models.json provider (camelCase, prices in dollars per million tokens) plus ``env``
(the variables holding its key) and ``default`` (the model chosen when settings name none, as the
reference's ``defaultModelPerProvider``). models.json can add models to these providers, override
fields of their models (``modelOverrides``) or point a provider at a proxy (``baseUrl``).

Loading is lazy and once per process: ``--version`` and other commands that need no model never
read the file. The entries are trusted (a test validates every one of them), so they skip
models.json's checks, which would cost more than reading the file: a provider that nothing
changes goes straight to :class:`~knightcode._llm.types.Model` objects (:func:`builtin_models`,
built once per process); one that models.json or a plugin changes is first turned into
:class:`~knightcode._llm.models_config.ModelConfig` objects (:func:`model_config`) to merge into.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import NotRequired, TypedDict, cast

from knightcode._llm.models_config import CostConfig, ModelConfig
from knightcode._llm.types import Model, ModelCost

__all__ = [
    "BuiltinModel",
    "BuiltinProvider",
    "builtin_models",
    "builtin_providers",
    "catalogue_source",
    "model_config",
]

CATALOGUE = Path(__file__).with_name("catalogue.json")


class _Cost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float


class BuiltinModel(TypedDict):
    """A model entry, as in models.json."""

    id: str
    name: str
    contextWindow: int
    maxTokens: int
    reasoning: bool
    input: list[str]
    cost: _Cost
    api: NotRequired[str]
    baseUrl: NotRequired[str]
    headers: NotRequired[dict[str, str]]
    compat: NotRequired[dict[str, object]]
    thinkingLevelMap: NotRequired[dict[str, str | None]]


class BuiltinProvider(TypedDict):
    """A provider entry: models.json's fields plus ``env`` and ``default``."""

    name: str
    baseUrl: str
    api: str
    env: list[str]
    compat: NotRequired[dict[str, object]]
    default: NotRequired[str]
    models: list[BuiltinModel]


class _Catalogue(TypedDict):
    source: dict[str, str]
    providers: list[BuiltinProvider]


@functools.cache
def _catalogue() -> _Catalogue:
    return cast("_Catalogue", json.loads(CATALOGUE.read_bytes()))


def builtin_providers() -> dict[str, BuiltinProvider]:
    """The built-in providers by name, in the reference's order of preference for a default."""
    return {provider["name"]: provider for provider in _catalogue()["providers"]}


def catalogue_source() -> str:
    """Where the catalogue comes from, e.g. ``@mariozechner/pi-ai@0.73.1``."""
    source = _catalogue()["source"]
    return f"{source['package']}@{source['version']}"


def model_config(entry: BuiltinModel) -> ModelConfig:
    """The :class:`ModelConfig` of a catalogue entry, built without models.json's checks."""
    cost = CostConfig.__new__(CostConfig)
    prices = entry["cost"]
    cost.__dict__.update(
        input=prices["input"],
        output=prices["output"],
        cache_read=prices["cacheRead"],
        cache_write=prices["cacheWrite"],
        tiers=None,
        extra={},
    )
    config = ModelConfig.__new__(ModelConfig)
    config.__dict__.update(
        id=entry["id"],
        name=entry["name"],
        api=entry.get("api"),
        base_url=entry.get("baseUrl"),
        reasoning=entry["reasoning"],
        input=entry["input"],
        context_window=entry["contextWindow"],
        max_tokens=entry["maxTokens"],
        cost=cost,
        headers=entry.get("headers", {}),
        compat=entry.get("compat", {}),
        thinking_level_map=entry.get("thinkingLevelMap", {}),
        sampling_params=None,
        extra={},
    )
    return config


_models_cache: dict[str, tuple[BuiltinProvider, tuple[Model, ...]]] = {}


def builtin_models(name: str, data: BuiltinProvider) -> tuple[Model, ...]:
    """The models of built-in provider ``name`` (entry ``data``) as Models, built once per
    process for the same entry.
    """
    cached = _models_cache.get(name)
    if cached is None or cached[0] is not data:
        cached = (data, _build_models(name, data))
        _models_cache[name] = cached
    return cached[1]


def _build_models(name: str, provider: BuiltinProvider) -> tuple[Model, ...]:
    # Start-up pays for this once per process (~900 models): positional arguments, and the
    # provider's compat, the empty maps and the input tuples shared where entries add nothing.
    api, base_url = provider["api"], provider["baseUrl"]
    compat: dict[str, object] = provider.get("compat", {})
    empty: dict[str, str] = {}
    no_levels: dict[str, str | None] = {}
    inputs: dict[tuple[str, ...], tuple[str, ...]] = {}
    models = []
    for entry in provider["models"]:
        prices = entry["cost"]
        kinds = tuple(entry["input"])
        own = entry.get("compat")
        models.append(
            Model(
                name,
                entry["id"],
                entry["name"],
                entry.get("api", api),
                entry.get("baseUrl", base_url),
                entry["contextWindow"],
                entry["maxTokens"],
                entry["reasoning"],
                inputs.setdefault(kinds, kinds),
                ModelCost(
                    prices["input"], prices["output"], prices["cacheRead"], prices["cacheWrite"]
                ),
                entry.get("headers", empty),
                {**compat, **own} if own else compat,
                entry.get("thinkingLevelMap", no_levels),
            )
        )
    return tuple(models)
