"""The part of :class:`~knightcode._llm.registry.ModelRegistry` that talks to live servers:
discovering providers' models (:mod:`knightcode._llm.discovery`) and classification dispatch
(:mod:`knightcode._llm.classify`). Kept apart so the registry module stays readable; it is a
mixin of ``ModelRegistry`` and uses its provider specs, keys and model lists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._abort import AbortSignal
from knightcode._errors import ConfigError
from knightcode._llm.discovery import DiscoveredModels, DiscoveredState, ProviderAccess
from knightcode._llm.providers import ProviderSpec
from knightcode._llm.types import Model

if TYPE_CHECKING:
    # Imported when a classifier is first asked: most runs never classify (3 ms of start-up).
    from knightcode._llm.classify import Classification, Question

__all__ = ["DynamicModels"]


class DynamicModels:
    """Discovery and classification for :class:`ModelRegistry` (which provides the state below)."""

    agent_dir: Path | None
    _specs: dict[str, ProviderSpec]
    _discovered: DiscoveredState
    _classifiers: list[Model]

    def _combine(self) -> None:
        raise NotImplementedError  # ModelRegistry rebuilds its model lists

    def get_api_key(self, provider: str) -> str | None:
        raise NotImplementedError

    def _env(self) -> Mapping[str, str]:
        raise NotImplementedError

    # --- discovery ---

    @property
    def discovering_providers(self) -> list[str]:
        """Providers whose models are discovered at run time."""
        return [name for name, spec in self._specs.items() if spec.discover is not None]

    @property
    def discovery_errors(self) -> dict[str, str]:
        """Provider -> why its last discovery failed (a message for the user)."""
        return dict(self._discovered.errors)

    async def refresh_models(
        self, providers: Sequence[str] | None = None, *, signal: AbortSignal | None = None
    ) -> None:
        """Ask discovering providers for their current models (all of them when None).

        Providers are asked concurrently; a failure is recorded in :attr:`discovery_errors`, drops
        that provider's discovered models and never raises. Call it before listing models for a
        person (a model picker, RPC ``get_available_models``) so the list shows the server's truth.

        :raises Aborted: ``signal`` was set before every provider answered (nothing is recorded)
        """
        names = [
            name
            for name in (self.discovering_providers if providers is None else providers)
            if name in self._specs and self._specs[name].discover is not None
        ]
        if signal is not None:
            signal.raise_if_aborted()  # before any provider is asked
        asking = asyncio.gather(
            *(self._discover(self._specs[name]) for name in names), return_exceptions=True
        )
        results = await (signal or AbortSignal()).guard(asking)
        for name, result in zip(names, results, strict=True):
            if isinstance(result, asyncio.CancelledError):
                raise result
            self._discovered.record(name, result)
        self._combine()

    async def _discover(self, spec: ProviderSpec) -> DiscoveredModels:
        assert spec.discover is not None
        result = await spec.discover(await self.access(spec.name))
        if not isinstance(result, DiscoveredModels):
            raise TypeError(f"discover() returned {type(result).__name__}, not DiscoveredModels")
        return result

    async def access(self, provider: str) -> ProviderAccess:
        """How to reach ``provider``: its configured URL, resolved key and headers.

        :raises ConfigError: a ``!command`` key failed, or auth.json is malformed
        """
        spec = self._specs[provider]
        key = await asyncio.to_thread(self.get_api_key, provider)
        return ProviderAccess(
            provider, spec.base_url, key, dict(spec.headers), self.agent_dir, dict(self._env())
        )

    async def _discover_missing(
        self, providers: Sequence[str], signal: AbortSignal | None = None
    ) -> bool:
        """Ask those of ``providers`` that discover their models; False when none does."""
        dynamic = [name for name in providers if name in self.discovering_providers]
        if not dynamic:
            return False
        await self.refresh_models(dynamic, signal=signal)
        return True

    @property
    def classifiers(self) -> list[Model]:
        """Every known classifier model (``kind="classifier"``), provider by provider."""
        return list(self._classifiers)

    def unavailable_reason(self, provider: str, model_id: str) -> str | None:
        """Why ``provider/model_id`` cannot be selected, when its discovering provider said so
        (e.g. "it is not loaded …: load it with /llama load ID") or could not be reached; None
        otherwise. A model picker shows this instead of a bare "not found".
        """
        return self._discovered.why_unavailable(provider, model_id)

    def unavailable_reasons(self, provider: str) -> dict[str, str]:
        """Every model ``provider`` reported it cannot serve now, with the reason (empty when it
        was never asked); the start-up error for ``--provider`` alone lists them.
        """
        found = self._discovered.found.get(provider)
        return dict(found.unavailable) if found is not None else {}

    async def find_classifier(
        self, provider: str, model_id: str, *, signal: AbortSignal | None = None
    ) -> Model | None:
        """The classifier ``model_id`` of ``provider``, or None (asks a discovering provider
        that was never asked).
        """
        if not self._discovered.asked(provider):
            await self._discover_missing([provider], signal)
        for model in self._classifiers:
            if model.provider == provider and model.id == model_id:
                return model
        return None

    # --- classifiers ---

    async def classify(
        self,
        model: Model | str,
        state: object,
        questions: Mapping[str, Question | Mapping[str, object]],
        *,
        temperature: float = 1.0,
        signal: AbortSignal | None = None,
    ) -> Classification:
        """Answer typed questions about ``state`` with a classifier model.

        :param model: a classifier from :attr:`classifiers`, or its ``provider/id``
        :param state: the JSON value (string, object, list) the questions are about
        :param questions: question id -> a :mod:`~knightcode._llm.classify` question or its dict
            form (``{"type": "choice", "instructions": …, "criteria": {…}}``)
        :param temperature: divides the label logits before normalising (above 1 softens)
        :param signal: set it to stop between questions
        :raises ClassificationError: unknown classifier, invalid questions, or the provider failed
            (the message says what to do)
        """
        from knightcode._llm.classify import (
            Classification,
            ClassificationError,
            ClassifyRequest,
            parse_questions,
        )

        classifier = await self._classifier(model, signal)
        request = ClassifyRequest(state, parse_questions(questions), temperature, signal)
        spec = self._specs.get(classifier.provider)
        if spec is None or spec.classify is None:
            raise ClassificationError(f"provider {classifier.provider!r} cannot classify")
        try:
            access = await self.access(classifier.provider)
        except ConfigError as exc:
            raise ClassificationError(str(exc)) from None
        result = await spec.classify(classifier, request, access)
        if not isinstance(result, Classification):
            raise ClassificationError(
                f"provider {classifier.provider!r} returned {type(result).__name__} from classify()"
            )
        return result

    async def _classifier(self, model: Model | str, signal: AbortSignal | None) -> Model:
        from knightcode._llm.classify import ClassificationError

        if isinstance(model, Model):
            if model.kind != "classifier":
                raise ClassificationError(
                    f"{model.ref} is a chat model; pick one of ModelRegistry.classifiers"
                )
            return model
        provider, _, model_id = model.partition("/")
        found = await self.find_classifier(provider, model_id, signal=signal) if model_id else None
        if found is not None:
            return found
        reason = self._discovered.errors.get(provider)
        known = ", ".join(m.ref for m in self._classifiers[:8]) or "none"
        hint = f": {reason}" if reason else f"; known classifiers: {known}"
        raise ClassificationError(f"unknown classifier {model!r}{hint}")
