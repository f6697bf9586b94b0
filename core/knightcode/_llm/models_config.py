"""The validated form of ``<agent-dir>/models.json`` (and of plugin-registered model lists).

Every way a value can be wrong becomes one line naming the file and the dotted field::

    models.json error in /home/u/.knightcode/agent/models.json:
    providers.local.models[0].contextWindow: expected a positive integer, got 0

(on one line).

Unknown keys are errors (a misspelt ``contextwindow`` silently ignored would cost an afternoon).
The tables are declared with :mod:`knightcode._config.schema` rather than pydantic, for start-up
time: every run with a models.json reads it (see there).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from knightcode._config import values
from knightcode._config.schema import (
    Checked,
    Field,
    ListOf,
    MapOf,
    Section,
    SectionOf,
    Spec,
    nested,
    nullable,
)
from knightcode._config.values import InvalidSetting
from knightcode._errors import ConfigError

__all__ = [
    "CostConfig",
    "ModelConfig",
    "ModelOverride",
    "ModelsFile",
    "ProviderConfig",
    "models_json_error",
    "parse_model_configs",
    "parse_models_file",
]


THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
"""The keys a ``thinkingLevelMap`` may have (the thinking levels of settings and ``--thinking``)."""


def _positive_int(value: object) -> str | None:
    if type(value) is not int or value <= 0 or value > values.MAX_SAFE_INTEGER:
        return f"expected a positive integer, got {values.describe(value)}"
    return None


def _price(value: object) -> str | None:
    # bool is an int to isinstance(), but a JSON true is not a price.
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or value < 0
        or math.isnan(value)
    ):
        got = values.describe(value)
        return f"expected a non-negative number (dollars per million tokens), got {got}"
    return None


def _non_empty_str(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return f"expected a non-empty string, got {values.describe(value)}"
    return None


def _api(value: object) -> str | None:
    # Any name is accepted, like the reference: a model whose API has no client here is listed
    # and explained when chosen (see providers.unsupported_api_warnings), not a refusal to start.
    return _non_empty_str(value)


def _inputs(value: object) -> str | None:
    if (
        not isinstance(value, list)
        or not value
        or any(item not in ("text", "image") for item in value)
    ):
        return f'expected a list of "text" and "image", got {values.describe(value)}'
    return None


def _level_map(value: object) -> str | None:
    if not isinstance(value, dict) or any(
        key not in THINKING_LEVELS or not (item is None or isinstance(item, str))
        for key, item in value.items()
    ):
        levels = ", ".join(THINKING_LEVELS)
        return (
            f"expected an object from thinking levels ({levels}) to a string or null, "
            f"got {values.describe(value)}"
        )
    return None


def _object_list(value: object) -> str | None:
    if not isinstance(value, list) or any(not isinstance(item, dict) for item in value):
        return f"expected a list of objects, got {values.describe(value)}"
    return None


def _string_map(value: object) -> str | None:
    if not isinstance(value, dict) or any(not isinstance(v, str) for v in value.values()):
        return f"expected an object whose values are strings, got {values.describe(value)}"
    return None


POSITIVE_INT: Spec[int] = Checked(_positive_int)
PRICE: Spec[float] = Checked(_price)
NON_EMPTY: Spec[str] = Checked(_non_empty_str)
TEXT: Spec[str] = Checked(values.check_str)
FLAG: Spec[bool] = Checked(values.check_bool)
API: Spec[str] = Checked(_api)
INPUTS: Spec[list[str]] = Checked(_inputs)
STRING_MAP: Spec[dict[str, str]] = Checked(_string_map)
LEVEL_MAP: Spec[dict[str, str | None]] = Checked(_level_map)
OBJECT: Spec[dict[str, object]] = Checked(values.check_object)
OBJECT_LIST: Spec[list[dict[str, object]]] = Checked(_object_list)


class _Strict(Section):
    """A models.json object: an unknown key is an error, with a hint when it looks misspelt."""

    unknown_keys = "reject"

    @classmethod
    def unknown_key_problem(cls, key: str) -> str:
        import difflib  # only for an error message

        known = CostConfig.keys | ModelConfig.keys | ModelOverride.keys | ProviderConfig.keys
        close = difflib.get_close_matches(key, sorted(known), n=1)
        return "unknown key" + (f' (did you mean "{close[0]}"?)' if close else "")


class CostConfig(_Strict):
    """``cost``: dollars per million tokens."""

    input = Field("input", PRICE, 0.0)
    output = Field("output", PRICE, 0.0)
    cache_read = Field("cacheRead", PRICE, 0.0)
    cache_write = Field("cacheWrite", PRICE, 0.0)
    # The reference's tiered prices (a higher rate above some input size): accepted, not used.
    tiers = Field("tiers", nullable(OBJECT_LIST), None)


class ModelConfig(_Strict):
    """One entry of a provider's ``models``."""

    id = Field("id", NON_EMPTY)
    name = Field("name", nullable(TEXT), None)
    api = Field("api", nullable(API), None)
    base_url = Field("baseUrl", nullable(NON_EMPTY), None)
    reasoning = Field("reasoning", FLAG, False)
    input = Field("input", INPUTS, factory=lambda: ["text"])
    context_window = Field("contextWindow", POSITIVE_INT, 128000)
    max_tokens = Field("maxTokens", POSITIVE_INT, 16384)
    cost = nested("cost", CostConfig)
    headers = Field("headers", STRING_MAP, factory=dict)
    compat = Field("compat", OBJECT, factory=dict)
    thinking_level_map = Field("thinkingLevelMap", LEVEL_MAP, factory=dict)
    # The reference's per-model sampling parameters: accepted with a warning, not sent.
    sampling_params = Field("samplingParams", nullable(OBJECT), None)


class ModelOverride(_Strict):
    """An entry of ``modelOverrides``: changes to a built-in model (every field optional)."""

    name = Field("name", nullable(TEXT), None)
    reasoning = Field("reasoning", nullable(FLAG), None)
    input = Field("input", nullable(INPUTS), None)
    context_window = Field("contextWindow", nullable(POSITIVE_INT), None)
    max_tokens = Field("maxTokens", nullable(POSITIVE_INT), None)
    # Checked as a whole once merged over the model's cost (see providers._apply_overrides).
    cost = Field("cost", nullable(OBJECT), None)
    headers = Field("headers", nullable(STRING_MAP), None)
    compat = Field("compat", nullable(OBJECT), None)
    thinking_level_map = Field("thinkingLevelMap", nullable(LEVEL_MAP), None)


class ProviderConfig(_Strict):
    """``providers.<name>``."""

    name = Field("name", nullable(NON_EMPTY), None)  # a display name: accepted, not shown
    base_url = Field("baseUrl", nullable(NON_EMPTY), None)
    api = Field("api", nullable(API), None)
    api_key = Field("apiKey", nullable(NON_EMPTY), None)
    headers = Field("headers", STRING_MAP, factory=dict)
    # True: send ``Authorization: Bearer <key>`` whatever the API (a proxy in front of Anthropic).
    auth_header = Field("authHeader", FLAG, False)
    compat = Field("compat", OBJECT, factory=dict)
    models = Field("models", nullable(ListOf(SectionOf(ModelConfig))), None)
    model_overrides = Field("modelOverrides", MapOf(SectionOf(ModelOverride)), factory=dict)


class ModelsFile(Section):
    """The whole file; top-level keys other than ``providers`` (``$schema`` …) are ignored."""

    unknown_keys = "ignore"
    providers = Field("providers", MapOf(SectionOf(ProviderConfig)), factory=dict)


def models_json_error(
    path: Path | str, key_parts: Sequence[str | int], problem: str
) -> ConfigError:
    """``models.json error in <path>: <dotted key>: <problem>``."""
    key = values.format_key(key_parts)
    return ConfigError(f"models.json error in {path}: {key + ': ' if key else ''}{problem}")


def parse_models_file(data: Mapping[str, object], path: Path | str) -> ModelsFile:
    """Validate the contents of a models.json.

    :raises ConfigError: the first problem, naming the file and the field
    """
    try:
        return ModelsFile.parse(data)
    except InvalidSetting as exc:
        raise models_json_error(path, exc.key_parts, exc.problem) from None


def parse_model_configs(models: Sequence[object]) -> list[ModelConfig]:
    """Validate a plugin provider's ``models`` list.

    :raises ValueError: the first problem, as ``models[0].contextWindow: expected …``
    """
    try:
        return [ModelConfig.parse(raw, ("models", index)) for index, raw in enumerate(models)]
    except InvalidSetting as exc:
        raise ValueError(str(exc)) from None
