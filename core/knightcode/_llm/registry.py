"""The model registry: every known provider and model, their keys, and one streaming entry point.

Providers come from three layers, later ones overriding earlier ones:

1. the built-in providers (:mod:`knightcode._llm.builtin`);
2. providers registered by plugins (``ProviderDefinition``; the caller passes them in, so this
   module never imports the plugin host);
3. ``<agent-dir>/models.json`` — the user has the last word. A provider there with a built-in
   name changes that provider (``baseUrl``, ``headers``, ``apiKey``, ``compat``), adds or replaces
   models by id, and can adjust built-in models with ``modelOverrides``.

Plugin providers with a ``discover`` function list their models at run time, from a live server
(:mod:`knightcode._llm.discovery`): :meth:`ModelRegistry.refresh_models` asks them, and a look-up
(:meth:`~ModelRegistry.find`, :meth:`~ModelRegistry.resolve`) that needs one of their models asks
once by itself. Some of those models are *classifiers* (``Model.kind``): they are listed apart in
:attr:`~ModelRegistry.classifiers` and answer :meth:`~ModelRegistry.classify`, never a chat.

API keys are looked up in the reference's order: a runtime key (``--api-key``), the provider's
entry in ``auth.json``, the provider's environment variables (``OPENAI_API_KEY`` …), then the
provider's configured ``apiKey`` (models.json or plugin). A stored or configured key is a
literal, an environment variable name or a ``!command`` (see :mod:`knightcode._llm.keys`). A
provider that is not built in and configures no key needs none (a local llama.cpp or Ollama
endpoint).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import os
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import cast

import httpx

from knightcode._abort import AbortSignal
from knightcode._auth.tokens import OAuthTokens
from knightcode._errors import ConfigError, UsageError
from knightcode._llm.builtin import builtin_providers
from knightcode._llm.discovery import DiscoveredState
from knightcode._llm.http import make_client
from knightcode._llm.keys import AUTH_FILENAME, AuthStorage, resolve_config_value
from knightcode._llm.providers import (
    ProviderSpec,
    apply_models_file,
    build_models,
    plugin_spec,
    unsupported_api_warnings,
)
from knightcode._llm.registry_dynamic import DynamicModels
from knightcode._llm.types import (
    KNOWN_APIS,
    Context,
    Model,
    StreamOptions,
    new_assistant_message,
)
from knightcode._plugins.definitions import ProviderDefinition, ProviderStream
from knightcode._types.stream import AssistantMessageEvent

__all__ = ["MODELS_FILENAME", "ModelRegistry"]

MODELS_FILENAME = "models.json"


class ModelRegistry(DynamicModels):
    """Known models and how to reach them.

    :param agent_dir: where ``models.json`` and ``auth.json`` live (None: neither is used)
    :param providers: providers registered by plugins
    :param environ: the environment for key lookups (``os.environ`` when None)
    :param http_idle_timeout_ms: settings ``httpIdleTimeoutMs``: the longest silence from a
        provider before a request fails
    :param proxy: an HTTP proxy URL for provider requests (settings ``httpProxy``)
    :param max_retry_delay_ms: settings ``retry.provider.maxRetryDelayMs``: the longest
        ``Retry-After`` a request reports as a wait (0: no limit)
    :param max_retries: settings ``retry.provider.maxRetries``: attempts after the first inside
        one request, for a transient failure (see :class:`~knightcode._llm.transport.StreamFailed`)
    :param request_timeout_ms: settings ``retry.provider.timeoutMs``: the provider request's
        timeout, over ``http_idle_timeout_ms`` (None: that one)
    :raises ConfigError: models.json is invalid (the message names the file and the field)
    """

    def __init__(
        self,
        agent_dir: Path | None = None,
        *,
        providers: Sequence[ProviderDefinition] = (),
        environ: Mapping[str, str] | None = None,
        http_idle_timeout_ms: int = 300000,
        proxy: str | None = None,
        max_retry_delay_ms: int = 60000,
        max_retries: int = 0,
        request_timeout_ms: int | None = None,
    ) -> None:
        self.agent_dir = agent_dir
        self.max_retries = max_retries
        self.request_timeout_ms = request_timeout_ms
        self.environ = environ
        self.http_idle_timeout_ms = http_idle_timeout_ms
        self.max_retry_delay_ms = max_retry_delay_ms
        self.proxy = proxy
        self.auth: AuthStorage | None = (
            AuthStorage(agent_dir / AUTH_FILENAME) if agent_dir else None
        )
        self.oauth = OAuthTokens(self.auth) if self.auth is not None else None
        """Subscription logins stored in auth.json (refreshed as requests need them)."""
        self.load_errors: list[str] = []
        """Plugin providers that were skipped, one line each (the caller reports them)."""
        self._plugin_definitions = list(providers)
        self._runtime_keys: dict[str, str] = {}
        self._specs: dict[str, ProviderSpec] = {}
        self._models: list[Model] = []
        self._static_models: list[Model] = []
        self._classifiers: list[Model] = []
        self._discovered = DiscoveredState()
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self.refresh()

    # --- loading ---

    def refresh(self) -> None:
        """Re-read models.json (the model picker calls this so edits apply without a restart).

        :raises ConfigError: models.json is invalid
        """
        specs = {
            name: ProviderSpec.builtin_spec(name, data)
            for name, data in builtin_providers().items()
        }
        self.load_errors = []
        for definition in self._plugin_definitions:
            try:
                spec = plugin_spec(definition, specs.get(definition.name))
            except ValueError as exc:
                self.load_errors.append(
                    f"provider {definition.name!r} registered by a plugin: {exc}"
                )
                continue
            specs[definition.name] = spec
        if self.agent_dir is not None:
            self.load_errors.extend(apply_models_file(specs, self.agent_dir / MODELS_FILENAME))
        self.load_errors.extend(unsupported_api_warnings(specs))
        self._specs = specs
        self._static_models = build_models(specs)
        self._combine()

    def _combine(self) -> None:
        # Discovered models follow the declared ones of the same provider, in provider order.
        order = list(self._specs)
        chat = self._discovered.models(order, "chat")
        self._models = sorted(
            self._static_models + chat, key=lambda model: order.index(model.provider)
        )
        self._classifiers = self._discovered.models(order, "classifier")

    # --- lookup ---

    @property
    def models(self) -> list[Model]:
        """Every known model, provider by provider."""
        return list(self._models)

    @property
    def providers(self) -> list[str]:
        """Every known provider name."""
        return list(self._specs)

    async def find(
        self, provider: str, model_id: str, *, signal: AbortSignal | None = None
    ) -> Model | None:
        """The chat model ``model_id`` of ``provider``, or None.

        A discovering provider is asked (a network call, which ``signal`` aborts) when it never
        was, and again when the model is not among what it said last time: the server may have
        loaded it since. :meth:`find_known` answers from what is known, without asking.

        :raises Aborted: ``signal`` was set during discovery
        """
        found = self.find_known(provider, model_id) if self._discovered.asked(provider) else None
        if found is None and await self._discover_missing([provider], signal):
            found = self.find_known(provider, model_id)
        return found or self.find_known(provider, model_id)

    def find_known(self, provider: str, model_id: str) -> Model | None:
        """The chat model ``model_id`` of ``provider`` among the models known now (no I/O)."""
        for model in self._models:
            if model.provider == provider and model.id == model_id:
                return model
        return None

    async def resolve(
        self, reference: str, provider: str | None = None, *, signal: AbortSignal | None = None
    ) -> Model:
        """The model named by ``--model``/settings: ``provider/id`` or a bare id.

        A bare id found at several providers resolves to the first one that has a key.

        A reference that matches nothing, or a model that is not ready, makes the discovering
        providers it could belong to look again (a network call): the server may have loaded the
        model since. A model that is still not ready is returned all the same (see
        ``DiscoveredModels``): the session starts on it and the user makes it ready from inside.

        :param provider: restricts the search (``--provider``)
        :raises UsageError: no such model (the message gives the provider's reason when it
            knows the model but cannot serve it, else lists some known ones)
        """
        if provider is not None and provider not in self._specs:
            raise UsageError(f"unknown provider {provider!r}; known: {', '.join(self._specs)}")
        found = self._lookup(reference, provider)
        candidates = self._providers_for(reference, provider)
        stale = found is None or self._not_ready(found)  # the server may have loaded it since
        if stale and await self._discover_missing(candidates, signal):
            found = self._lookup(reference, provider)
        if found is not None:
            return found
        for name in candidates:
            model_id = _model_id_for(reference, name, provider)
            reason = self._discovered.why_unavailable(name, model_id)
            if reason:
                raise UsageError(f"model {name}/{model_id} cannot be used: {reason}")
        where = f" of provider {provider!r}" if provider else ""
        head = reference.partition("/")[0]
        named = provider or (head if head in self._specs and "/" in reference else None)
        if named is not None:
            # The provider's own models (for a discovering one, those it cannot serve now too):
            # "llama.cpp has: tiny-chat, tiny-tools" says more than eight unrelated models.
            found_ids = self._discovered.found.get(named)
            ids = [model.id for model in self._models if model.provider == named]
            ids += list(found_ids.unavailable) if found_ids is not None else []
            listing = ", ".join(ids[:12]) or "none"
            raise UsageError(
                f"unknown model {reference!r}{where}; provider {named!r} has: {listing}"
            )
        # Models the user can use first: the catalogue's first providers may have no key here.
        known = ", ".join(model.ref for model in (self.available() or self._models)[:8])
        raise UsageError(f"unknown model {reference!r}{where}; known models include: {known}")

    def _providers_for(self, reference: str, provider: str | None) -> list[str]:
        """The discovering providers a reference may name."""
        if provider is not None:
            return [provider] if provider in self.discovering_providers else []
        head, _, rest = reference.partition("/")
        if rest and head in self.discovering_providers:
            return [head]
        return self.discovering_providers

    def _lookup(self, reference: str, provider: str | None) -> Model | None:
        if provider is not None:
            found = self.find_known(provider, reference)
            if found is None and reference.startswith(provider + "/"):
                found = self.find_known(provider, reference[len(provider) + 1 :])
            if found is not None:
                return found
        else:
            head, _, rest = reference.partition("/")
            if rest and head in self._specs:
                found = self.find_known(head, rest)
                if found is not None:
                    return found
            matches = [model for model in self._models if model.id == reference]
            if matches:
                usable = [model for model in matches if self.has_auth(model.provider)]
                return (usable or matches)[0]
        return None

    async def default_model(
        self,
        default_provider: str | None = None,
        default_model: str | None = None,
        *,
        signal: AbortSignal | None = None,
    ) -> Model | None:
        """The model to use when none is asked for: settings ``defaultProvider``/``defaultModel``
        when they name a known model, else (as the reference) the catalogue's default model of
        the first provider that has a key and that model, else the first usable model.
        """
        if default_model:
            try:
                return await self.resolve(default_model, default_provider, signal=signal)
            except UsageError:
                pass
        elif default_provider:
            if not self._discovered.asked(default_provider):  # a router: ask it what it has
                await self._discover_missing([default_provider], signal)
            models = [
                model
                for model in self._models
                if model.provider == default_provider and not self._not_ready(model)
            ]
            return _provider_default(models, self._specs) or (models[0] if models else None)
        available = self.available()
        return _provider_default(available, self._specs) or (available[0] if available else None)

    # --- keys ---

    def set_runtime_api_key(self, provider: str, key: str) -> None:
        """A key for this process only (``--api-key``); it wins over every other source."""
        self._runtime_keys[provider] = key

    def needs_api_key(self, provider: str) -> bool:
        """Whether requests to ``provider`` need a key (built-in ones and those configuring one)."""
        spec = self._specs.get(provider)
        return spec is not None and (spec.builtin or spec.api_key is not None)

    def has_auth(self, provider: str) -> bool:
        """Whether a key is configured or none is needed. ``!command`` keys are not run here."""
        if provider in self._runtime_keys or not self.needs_api_key(provider):
            return True
        spec = self._specs[provider]
        if self.oauth is not None and self.oauth.has(provider):
            return True
        try:
            if self.auth is not None and self.auth.get(provider) is not None:
                return True
        except ConfigError:
            pass
        env = self._env()
        return spec.api_key is not None or any(env.get(name) for name in spec.env_keys)

    def get_api_key(self, provider: str) -> str | None:
        """The key for ``provider`` (see the module docstring for the order), or None.

        :raises ConfigError: a ``!command`` failed, or auth.json is malformed
        """
        runtime = self._runtime_keys.get(provider)
        if runtime:
            return runtime
        if self.auth is not None:
            stored = self.auth.get(provider)
            if stored:
                where = f"auth.json error in {self.auth.path}: {provider}.key"
                return resolve_config_value(stored, where, self.environ)
        spec = self._specs.get(provider)
        env = self._env()
        for name in spec.env_keys if spec is not None else ():
            if env.get(name):
                return env[name]
        if spec is not None and spec.api_key is not None:
            return resolve_config_value(spec.api_key, spec.where("apiKey"), self.environ)
        return None

    def available(self) -> list[Model]:
        """Models whose provider has a key configured (or needs none) and whose API can be
        spoken: a built-in client's, or any when the provider has a plugin ``stream``; a
        discovered model that is not ready (see ``DiscoveredModels``) is left out.
        """
        usable = {provider: self.has_auth(provider) for provider in self._specs}
        return [
            model
            for model in self._models
            if usable.get(model.provider) and self._has_client(model) and not self._not_ready(model)
        ]

    def _not_ready(self, model: Model) -> bool:
        return self._discovered.why_unavailable(model.provider, model.id) is not None

    def _has_client(self, model: Model) -> bool:
        spec = self._specs.get(model.provider)
        return model.api in KNOWN_APIS or (spec is not None and spec.stream is not None)

    def _env(self) -> Mapping[str, str]:
        return os.environ if self.environ is None else self.environ

    # --- streaming ---

    def _http(self) -> httpx.AsyncClient:
        # One client (one connection pool) per event loop: a pool cannot outlive its loop.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            self._client = make_client(self.proxy)
            self._client_loop = loop
        return self._client

    async def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """Stream one response of ``model``: keys and headers resolved, the right client chosen.

        A missing key or a failing key command ends the stream with an ``error`` event (the
        message says what to set), like any other failure.
        """
        options = options or StreamOptions()
        spec = self._specs.get(model.provider)
        if model.kind == "classifier":
            yield _config_error(model, f"{model.ref} is a classifier: use classify(), not a chat")
            return
        if (
            self.oauth is not None
            and options.api_key is None
            and model.provider not in self._runtime_keys
            and self.oauth.has(model.provider)
        ):
            # A subscription login: its token (refreshed when needed) is the key.
            from knightcode._auth.requests import stream_with_oauth

            oauth_events = stream_with_oauth(
                self.oauth,
                model,
                context,
                options,
                lambda m, o: self._stream_once(m, spec, context, o),
            )
            async with contextlib.aclosing(oauth_events):
                async for event in oauth_events:
                    yield event
            return
        events = self._stream_once(model, spec, context, options)
        async with contextlib.aclosing(events):
            async for event in events:
                yield event

    async def _stream_once(
        self, model: Model, spec: ProviderSpec | None, context: Context, options: StreamOptions
    ) -> AsyncGenerator[AssistantMessageEvent, None]:
        """One request with the credentials and headers resolved (see :meth:`stream`)."""
        try:
            prepared = await self._prepare(model, spec, options)
        except ConfigError as exc:
            yield _config_error(model, str(exc))
            return
        if spec is not None and spec.stream is not None:
            async for event in _plugin_stream(spec.stream, model, context, prepared):
                yield event
            return
        # Each client is imported on first use: listing models (--list-models, the model picker)
        # or a run that speaks one API never pays for the others (start-up time).
        if model.api == "openai-completions":
            from knightcode._llm.openai_completions import stream_openai_completions

            events = stream_openai_completions(model, context, prepared, client=self._http())
        elif model.api == "anthropic-messages":
            from knightcode._llm.anthropic_messages import stream_anthropic_messages

            events = stream_anthropic_messages(model, context, prepared, client=self._http())
        elif model.api == "openai-responses":
            from knightcode._llm.openai_responses import stream_openai_responses

            events = stream_openai_responses(model, context, prepared, client=self._http())
        elif model.api == "azure-openai-responses":
            from knightcode._llm.azure_openai import stream_azure_openai_responses

            events = stream_azure_openai_responses(
                model, context, prepared, client=self._http(), environ=self.environ
            )
        elif model.api == "openai-codex-responses":
            from knightcode._llm.openai_codex import stream_openai_codex

            events = stream_openai_codex(model, context, prepared, client=self._http())
        elif model.api == "google-generative-ai":
            # Imported on first use: most runs never need these clients (start-up time).
            from knightcode._llm.google_generative import stream_google_generative

            events = stream_google_generative(model, context, prepared, client=self._http())
        elif model.api == "bedrock-converse-stream":
            from knightcode._llm.bedrock_converse import stream_bedrock_converse

            events = stream_bedrock_converse(model, context, prepared, client=self._http())
        else:
            yield _config_error(
                model,
                f"{model.ref} uses the API {model.api!r}, which knightcode has no client for "
                f"(supported: {', '.join(KNOWN_APIS)}); choose another model",
            )
            return
        async with contextlib.aclosing(events):
            async for event in events:
                yield event

    async def _prepare(
        self, model: Model, spec: ProviderSpec | None, options: StreamOptions
    ) -> StreamOptions:
        key = options.api_key
        if key is None:
            key = await asyncio.to_thread(self.get_api_key, model.provider)
            if key is None and self.needs_api_key(model.provider):
                raise ConfigError(_missing_key_message(model.provider, spec))
        headers = options.headers
        if spec is not None and spec.auth_header and key:
            # models.json authHeader: a proxy that wants a bearer token whatever the API.
            headers = {"Authorization": f"Bearer {key}", **headers}
        if model.headers:
            resolved = {}
            for name, value in model.headers.items():
                where = spec.where(f"headers.{name}") if spec is not None else f"header {name}"
                resolved[name] = await asyncio.to_thread(
                    resolve_config_value, value, where, self.environ
                )
            headers = {**resolved, **options.headers}
        idle_timeout_ms = options.idle_timeout_ms
        if self.request_timeout_ms is not None:
            idle_timeout_ms = self.request_timeout_ms
        elif idle_timeout_ms is None:
            idle_timeout_ms = self.http_idle_timeout_ms
        max_retry_delay_ms = options.max_retry_delay_ms
        if max_retry_delay_ms is None:
            max_retry_delay_ms = self.max_retry_delay_ms
        return dataclasses.replace(
            options,
            api_key=key,
            headers=headers,
            idle_timeout_ms=idle_timeout_ms,
            max_retry_delay_ms=max_retry_delay_ms,
            max_retries=self.max_retries if options.max_retries is None else options.max_retries,
        )

    async def aclose(self) -> None:
        """Close the shared HTTP client."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None


async def _plugin_stream(
    stream: ProviderStream, model: Model, context: Context, options: StreamOptions
) -> AsyncGenerator[AssistantMessageEvent, None]:
    """A plugin's stream, held to the same contract as ours: it ends with ``done`` or
    ``error`` and never raises (a plugin bug becomes an error event naming the provider).
    """
    ended = False
    try:
        result = stream(model, context, options)
        if inspect.isawaitable(result):
            result = await result
        # The events are passed on as the plugin made them (ProviderStream's contract); something
        # that is not an async iterable raises TypeError here, reported below.
        async for event in cast("AsyncIterable[AssistantMessageEvent]", result):
            ended = event.get("type") in ("done", "error")
            yield event
    except Exception as exc:
        if not ended:
            yield _config_error(
                model, f"provider {model.provider!r} failed: {type(exc).__name__}: {exc}"
            )


def _provider_default(models: Sequence[Model], specs: Mapping[str, ProviderSpec]) -> Model | None:
    """The first of ``models`` that is its provider's default model, in provider order."""
    for model in models:
        spec = specs.get(model.provider)
        if spec is not None and spec.default_model == model.id:
            return model
    return None


def _model_id_for(reference: str, provider: str, explicit: str | None) -> str:
    """The model id part of ``reference`` when it names a model of ``provider``."""
    if reference.startswith(provider + "/") and (explicit is None or explicit == provider):
        return reference[len(provider) + 1 :]
    return reference


def _missing_key_message(provider: str, spec: ProviderSpec | None) -> str:
    env = spec.env_keys if spec is not None else ()
    hint = f"set {' or '.join(env)}, " if env else ""
    return (
        f"No API key for provider {provider!r}: {hint}store one in {AUTH_FILENAME}, "
        f"or set providers.{provider}.apiKey in {MODELS_FILENAME}"
    )


def _config_error(model: Model, message: str) -> AssistantMessageEvent:
    output = new_assistant_message(model)
    output["stopReason"] = "error"
    output["errorMessage"] = message
    return {"type": "error", "reason": "error", "error": output}
