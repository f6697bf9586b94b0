"""Providers whose models are found at run time, by asking a live server.

A plugin provider with a ``discover`` function (see
:class:`~knightcode._plugins.definitions.ProviderDefinition`) does not declare its models: the
registry asks for them with :meth:`~knightcode._llm.registry.ModelRegistry.refresh_models`, and
lazily the first time a model of that provider is looked up. The function receives a
:class:`ProviderAccess` (how to reach the provider as configured) and returns
:class:`DiscoveredModels`: chat models and classifiers, with their real context windows, and the
models the server knows but that cannot be selected right now, each with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._llm.types import Model

__all__ = [
    "DiscoveredModels",
    "DiscoveredState",
    "DiscoveryError",
    "ProviderAccess",
]


@dataclass(frozen=True)
class ProviderAccess:
    """How to reach a provider, as the registry resolved it for one call.

    :param provider: the provider name
    :param base_url: the configured base URL (plugin definition, then models.json), or None
    :param api_key: the key from ``--api-key``, ``auth.json`` (type ``api_key``), the provider's
        environment variables or models.json ``apiKey`` (the first that has one), or None
    :param headers: configured extra headers (values unresolved)
    :param agent_dir: the agent directory (where ``auth.json`` lives), or None
    :param environ: the environment to read variables from
    """

    provider: str
    base_url: str | None
    api_key: str | None
    headers: Mapping[str, str] = field(default_factory=dict)
    agent_dir: Path | None = None
    environ: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DiscoveredModels:
    """What a ``discover`` function found.

    :param models: the selectable models: chat models (``kind="chat"``) and classifiers
        (``kind="classifier"``); they must all belong to the discovering provider
    :param unavailable: model id -> why it cannot be selected now (e.g. "not loaded: load it
        with /llama first"); selecting it raises a usage error with that reason. A model in both
        ``models`` and ``unavailable`` is *not ready*: it can be chosen by name (``--model``,
        ``/model``) so that knightcode starts and the user can make it ready from inside (a
        llama.cpp model loaded with ``/llama load``), but it is never picked as a default nor
        cycled through, and the reason says how to make it ready
    """

    models: Sequence[Model] = ()
    unavailable: Mapping[str, str] = field(default_factory=dict)


class DiscoveryError(Exception):
    """A ``discover`` function could not reach its server; ``str(exc)`` tells the user what to do.

    Any other exception is reported too, prefixed with its type (a plugin bug).
    """


class DiscoveredState:
    """The registry's memory of what each discovering provider last reported.

    :attr found: provider -> its last successful discovery
    :attr errors: provider -> why its last discovery failed (its models are then dropped: a
        server that cannot be reached serves nothing, and a stale list would only mislead)
    """

    def __init__(self) -> None:
        self.found: dict[str, DiscoveredModels] = {}
        self.errors: dict[str, str] = {}

    def asked(self, provider: str) -> bool:
        """Whether ``provider`` was asked at least once (successfully or not)."""
        return provider in self.found or provider in self.errors

    def record(self, provider: str, result: DiscoveredModels | BaseException) -> None:
        """Keep a discovery result, or the failure that replaced it."""
        if isinstance(result, BaseException):
            self.found.pop(provider, None)
            message = (
                str(result)
                if isinstance(result, DiscoveryError)
                else (f"model discovery failed: {type(result).__name__}: {result}")
            )
            self.errors[provider] = message
            return
        stray = [m.ref for m in result.models if m.provider != provider]
        if stray:
            self.record(provider, ValueError(f"discovered models of another provider: {stray}"))
            return
        self.errors.pop(provider, None)
        self.found[provider] = result

    def models(self, providers: Sequence[str], kind: str) -> list[Model]:
        """The discovered models of ``kind``, provider by provider in the order given."""
        return [
            model
            for provider in providers
            if provider in self.found
            for model in self.found[provider].models
            if model.kind == kind
        ]

    def why_unavailable(self, provider: str, model_id: str) -> str | None:
        """Why ``provider/model_id`` cannot be selected, when its provider said or failed."""
        found = self.found.get(provider)
        if found is not None:
            return found.unavailable.get(model_id)
        return self.errors.get(provider)
