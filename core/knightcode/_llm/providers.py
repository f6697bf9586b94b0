"""Provider specs: merging built-in providers, plugin providers and models.json into models."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from knightcode._config.jsonfile import read_json_object
from knightcode._config.values import InvalidSetting
from knightcode._llm.builtin import BuiltinProvider, builtin_models, model_config
from knightcode._llm.compat_keys import COMPAT_KEYS
from knightcode._llm.discovery import DiscoveredModels, ProviderAccess
from knightcode._llm.models_config import (
    CostConfig,
    ModelConfig,
    ProviderConfig,
    models_json_error,
    parse_model_configs,
    parse_models_file,
)
from knightcode._llm.types import KNOWN_APIS, Model, ModelCost
from knightcode._plugins.definitions import Classifier, ProviderDefinition, ProviderStream

__all__ = [
    "ProviderSpec",
    "apply_models_file",
    "build_models",
    "plugin_spec",
    "unsupported_api_warnings",
]


@dataclass
class ProviderSpec:
    """Everything known about one provider before its models are built.

    :param api_key: the *configured* key (literal, variable name or ``!command``), unresolved
    :param env_keys: environment variables holding the key (built-in providers)
    :param origin: where the provider was (last) configured, for error messages:
        ``"built-in"``, ``"registered by a plugin"`` or ``"models.json error in <path>"``
    """

    name: str
    base_url: str | None
    api: str | None
    api_key: str | None = None
    env_keys: tuple[str, ...] = ()
    headers: dict[str, str] = field(default_factory=dict)
    compat: dict[str, object] = field(default_factory=dict)
    models: dict[str, ModelConfig] = field(default_factory=dict)
    stream: ProviderStream | None = None
    discover: Callable[[ProviderAccess], Awaitable[DiscoveredModels]] | None = None
    classify: Classifier | None = None
    builtin: bool = False
    origin: str = "built-in"
    auth_header: bool = False
    default_model: str | None = None
    """The model chosen when settings name none (the catalogue's, as the reference's)."""
    catalogue: BuiltinProvider | None = None
    """A built-in provider nothing has changed: its models are the catalogue's, not yet in
    :attr:`models` (see :meth:`with_models`)."""

    def with_models(self) -> ProviderSpec:
        """This spec with the catalogue's models in :attr:`models`, to merge changes into."""
        if self.catalogue is None:
            return self
        models = {m["id"]: model_config(m) for m in self.catalogue["models"]}
        return dataclasses.replace(self, models=models, catalogue=None)

    def where(self, field_name: str) -> str:
        """How an error about one of this provider's fields names it."""
        if self.origin.startswith("models.json"):
            return f"{self.origin}: providers.{self.name}.{field_name}"
        return f"provider {self.name!r} ({self.origin}): {field_name}"

    @classmethod
    def builtin_spec(cls, name: str, data: BuiltinProvider) -> ProviderSpec:
        """A spec from an entry of :func:`~knightcode._llm.builtin.builtin_providers`."""
        return cls(
            name,
            data["baseUrl"],
            data["api"],
            env_keys=tuple(data["env"]),
            compat=dict(data.get("compat", {})),
            builtin=True,
            default_model=data.get("default"),
            catalogue=data,
        )


def plugin_spec(definition: ProviderDefinition, existing: ProviderSpec | None) -> ProviderSpec:
    """The spec of a plugin-registered provider (merged into a built-in one of the same name).

    :raises ValueError: the definition is unusable (the message names the field)
    """
    configs = parse_model_configs(definition.models)
    if existing is not None:
        existing = existing.with_models()
        spec = dataclasses.replace(
            existing,
            base_url=definition.base_url or existing.base_url,
            api=definition.api or existing.api,
            api_key=definition.api_key if definition.api_key is not None else existing.api_key,
            env_keys=definition.env_keys or existing.env_keys,
            headers={**existing.headers, **definition.headers},
            models=dict(existing.models),
            stream=definition.stream or existing.stream,
            discover=definition.discover or existing.discover,
            classify=definition.classify or existing.classify,
            origin="registered by a plugin",
        )
    else:
        if definition.stream is None and definition.discover is None:
            if definition.api not in KNOWN_APIS:
                raise ValueError(
                    f"api: expected one of {', '.join(KNOWN_APIS)} (or a stream function), "
                    f"got {definition.api!r}"
                )
            if not definition.base_url:
                raise ValueError("base_url: required unless the provider has a stream function")
        spec = ProviderSpec(
            definition.name,
            definition.base_url,
            definition.api,
            definition.api_key,
            env_keys=tuple(definition.env_keys),
            headers=dict(definition.headers),
            stream=definition.stream,
            discover=definition.discover,
            classify=definition.classify,
            origin="registered by a plugin",
        )
    for config in configs:
        spec.models[config.id] = config
    return spec


def apply_models_file(specs: dict[str, ProviderSpec], path: Path) -> list[str]:
    """Merge ``path`` (a models.json) into ``specs``; a missing file changes nothing.

    :returns: warnings to show: one line naming the reference's fields that are accepted but
        not used here (``samplingParams``, ``cost.tiers``, a provider's display ``name``)
    :raises ConfigError: the file is unreadable or invalid (naming the file and the field)
    """
    data = read_json_object(path)
    if data is None:
        return []
    parsed = parse_models_file(data, path)
    ignored: list[str] = []
    origin = f"models.json error in {path}"
    for name, config in parsed.providers.items():
        existing = specs.get(name)
        if existing is not None:
            existing = existing.with_models()
        if existing is None:
            _check_new_provider(name, config, path)
            spec = ProviderSpec(
                name,
                config.base_url,
                config.api,
                config.api_key,
                headers=dict(config.headers),
                compat=dict(config.compat),
                origin=origin,
                auth_header=config.auth_header,
            )
        else:
            spec = dataclasses.replace(
                existing,
                base_url=config.base_url or existing.base_url,
                api=config.api or existing.api,
                api_key=config.api_key if config.api_key is not None else existing.api_key,
                headers={**existing.headers, **config.headers},
                compat={**existing.compat, **config.compat},
                models=dict(existing.models),
                origin=origin,
                auth_header=config.auth_header or existing.auth_header,
            )
        _apply_overrides(spec, config, path)
        seen: set[str] = set()
        for index, model in enumerate(config.models or ()):
            if model.id in seen:
                raise models_json_error(
                    path,
                    ["providers", name, "models", index, "id"],
                    f"duplicate model id {model.id!r}",
                )
            seen.add(model.id)
            spec.models[model.id] = model
        specs[name] = spec
        ignored.extend(_ignored_fields(name, config))
    if not ignored:
        return []
    return [f"models.json: {', '.join(ignored)} not supported, ignored"]


def _ignored_fields(name: str, config: ProviderConfig) -> list[str]:
    """The fields of the reference's models.json that knightcode accepts but does not use."""
    where = f"providers.{name}"
    fields = [f"{where}.name"] if config.name is not None else []
    for index, model in enumerate(config.models or ()):
        if model.sampling_params is not None:
            fields.append(f"{where}.models[{index}].samplingParams")
        if model.cost.tiers is not None:
            fields.append(f"{where}.models[{index}].cost.tiers")
    for model_id, override in config.model_overrides.items():
        if override.cost is not None and "tiers" in override.cost:
            fields.append(f"{where}.modelOverrides.{model_id}.cost.tiers")
    return fields


def _check_new_provider(name: str, config: ProviderConfig, path: Path) -> None:
    if not config.models:
        return
    if config.base_url is None and any(model.base_url is None for model in config.models):
        raise models_json_error(
            path, ["providers", name, "baseUrl"], "required for a provider that is not built in"
        )
    if config.api is None:
        for index, model in enumerate(config.models):
            if model.api is None:
                choices = ", ".join(f'"{api}"' for api in KNOWN_APIS)
                raise models_json_error(
                    path,
                    ["providers", name, "api"],
                    f'required (or an "api" on every model): one of {choices}; '
                    f"models[{index}] has none",
                )


def _apply_overrides(spec: ProviderSpec, config: ProviderConfig, path: Path) -> None:
    for model_id, override in config.model_overrides.items():
        current = spec.models.get(model_id)
        if current is None:
            continue  # like the reference: overrides of unknown models are ignored
        model = current.copy()
        if override.name is not None:
            model.name = override.name
        if override.reasoning is not None:
            model.reasoning = override.reasoning
        if override.input is not None:
            model.input = override.input
        if override.context_window is not None:
            model.context_window = override.context_window
        if override.max_tokens is not None:
            model.max_tokens = override.max_tokens
        if override.headers is not None:
            model.headers = {**current.headers, **override.headers}
        if override.compat is not None:
            model.compat = {**current.compat, **override.compat}
        if override.thinking_level_map is not None:
            model.thinking_level_map = {
                **current.thinking_level_map,
                **override.thinking_level_map,
            }
        if override.cost is not None:
            where = ("providers", spec.name, "modelOverrides", model_id, "cost")
            try:
                model.cost = CostConfig.parse({**current.cost.to_json(), **override.cost}, where)
            except InvalidSetting as exc:
                raise models_json_error(path, exc.key_parts, exc.problem) from None
        spec.models[model_id] = model


def unsupported_api_warnings(specs: Mapping[str, ProviderSpec]) -> list[str]:
    """One line per provider using what knightcode does not implement, naming what is ignored.

    The reference accepts ``openai-responses``, ``google-generative-ai`` … and many ``compat``
    switches in models.json; such a file must not stop knightcode from starting. A model whose API
    has no client here is listed but unavailable (choosing it says why); an unknown ``compat``
    key is ignored. A plugin's ``stream`` serves any API, so those providers are not named; nor
    are built-in or plugin providers that models.json leaves alone (the catalogue lists providers
    whose clients may not be there yet: nobody configured them, so nothing is worth a warning).
    """
    lines = []
    for spec in specs.values():
        if spec.stream is not None or not spec.origin.startswith("models.json"):
            continue
        configs = spec.models.values()
        apis = sorted({api for c in configs if (api := c.api or spec.api)} - set(KNOWN_APIS))
        # A built-in provider's API without a client (e.g. openai-codex-responses before its
        # client exists) is not the user's doing: its models are just unavailable, silently.
        if apis and not spec.builtin:
            lines.append(
                f"models.json: providers.{spec.name}: API {', '.join(apis)} is not supported "
                f"(knightcode speaks {', '.join(KNOWN_APIS)}); its models are unavailable"
            )
        keys = set(spec.compat).union(*(c.compat for c in configs)) - COMPAT_KEYS
        if keys:
            names = ", ".join(f"compat.{key}" for key in sorted(keys))
            lines.append(f"models.json: providers.{spec.name}: {names} not supported, ignored")
    return lines


def build_models(specs: Mapping[str, ProviderSpec]) -> list[Model]:
    """The models of every provider, in provider order, then in the order they were declared."""
    models: list[Model] = []
    for spec in specs.values():
        if spec.catalogue is not None:
            models.extend(builtin_models(spec.name, spec.catalogue))
            continue
        for config in spec.models.values():
            cost = config.cost
            models.append(
                Model(
                    provider=spec.name,
                    id=config.id,
                    name=config.name or config.id,
                    api=config.api or spec.api or "custom",
                    base_url=config.base_url or spec.base_url or "",
                    context_window=config.context_window,
                    max_tokens=config.max_tokens,
                    reasoning=config.reasoning,
                    input=tuple(config.input),
                    cost=ModelCost(cost.input, cost.output, cost.cache_read, cost.cache_write),
                    headers={**spec.headers, **config.headers},
                    compat={**spec.compat, **config.compat},
                    thinking_level_map=dict(config.thinking_level_map),
                )
            )
    return models
