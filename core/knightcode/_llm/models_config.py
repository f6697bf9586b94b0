"""The validated form of ``<agent-dir>/models.json`` (and of plugin-registered model lists).

Every way a value can be wrong becomes one line naming the file and the dotted field::

    models.json error in /home/u/.knightcode/agent/models.json:
    providers.local.models[0].contextWindow: expected a positive integer, got 0

(on one line).

Unknown keys are errors (a misspelt ``contextwindow`` silently ignored would cost an afternoon).
This module imports pydantic; the registry imports it only when it reads a models.json.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, PydanticCustomError

from knightcode._config import values
from knightcode._errors import ConfigError
from knightcode._llm.types import KNOWN_APIS

__all__ = [
    "ModelConfig",
    "ModelsFile",
    "ProviderConfig",
    "models_json_error",
    "parse_model_configs",
    "parse_models_file",
]

_ERROR_TYPE = "knightcode_models"


def _checked(check: Callable[[object], str | None]) -> PlainValidator:
    def validate(value: object) -> object:
        problem = check(value)
        if problem is not None:
            raise PydanticCustomError(_ERROR_TYPE, "{problem}", {"problem": problem})
        return value

    return PlainValidator(validate)


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
    return values.check_choice(value, KNOWN_APIS)


def _inputs(value: object) -> str | None:
    if (
        not isinstance(value, list)
        or not value
        or any(item not in ("text", "image") for item in value)
    ):
        return f'expected a list of "text" and "image", got {values.describe(value)}'
    return None


def _string_map(value: object) -> str | None:
    if not isinstance(value, dict) or any(not isinstance(v, str) for v in value.values()):
        return f"expected an object whose values are strings, got {values.describe(value)}"
    return None


PositiveInt = Annotated[int, _checked(_positive_int)]
Price = Annotated[float, _checked(_price)]
NonEmpty = Annotated[str, _checked(_non_empty_str)]
Text = Annotated[str, _checked(values.check_str)]
Flag = Annotated[bool, _checked(values.check_bool)]
Api = Annotated[str, _checked(_api)]
Inputs = Annotated[list[str], _checked(_inputs)]
StringMap = Annotated[dict[str, str], _checked(_string_map)]
Obj = Annotated[dict[str, object], _checked(values.check_object)]


class _Section(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class CostConfig(_Section):
    """``cost``: dollars per million tokens."""

    input: Price = 0.0
    output: Price = 0.0
    cache_read: Price = 0.0
    cache_write: Price = 0.0


class ModelConfig(_Section):
    """One entry of a provider's ``models``."""

    id: NonEmpty
    name: Text | None = None
    api: Api | None = None
    reasoning: Flag = False
    input: Inputs = Field(default_factory=lambda: ["text"])
    context_window: PositiveInt = 128000
    max_tokens: PositiveInt = 16384
    cost: CostConfig = Field(default_factory=CostConfig)
    headers: StringMap = Field(default_factory=dict)
    compat: Obj = Field(default_factory=dict)


class ModelOverride(_Section):
    """An entry of ``modelOverrides``: changes to a built-in model (every field optional)."""

    name: Text | None = None
    reasoning: Flag | None = None
    input: Inputs | None = None
    context_window: PositiveInt | None = None
    max_tokens: PositiveInt | None = None
    cost: Obj | None = None
    headers: StringMap | None = None
    compat: Obj | None = None


class ProviderConfig(_Section):
    """``providers.<name>``."""

    base_url: NonEmpty | None = None
    api: Api | None = None
    api_key: NonEmpty | None = None
    headers: StringMap = Field(default_factory=dict)
    compat: Obj = Field(default_factory=dict)
    models: list[ModelConfig] | None = None
    model_overrides: dict[str, ModelOverride] = Field(default_factory=dict)


class ModelsFile(BaseModel):
    """The whole file; top-level keys other than ``providers`` (``$schema`` …) are ignored."""

    model_config = ConfigDict(extra="ignore")
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)


_KNOWN_KEYS = sorted(
    {
        field.alias or name
        for model in (CostConfig, ModelConfig, ModelOverride, ProviderConfig)
        for name, field in model.model_fields.items()
    }
)


def _problem(error: ErrorDetails) -> str:
    kind = error["type"]
    if kind == _ERROR_TYPE:
        return str(error["ctx"]["problem"])
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        key = str(error["loc"][-1])
        close = difflib.get_close_matches(key, _KNOWN_KEYS, n=1)
        return "unknown key" + (f' (did you mean "{close[0]}"?)' if close else "")
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected an object, got {values.describe(error.get('input'))}"
    if kind == "list_type":
        return f"expected a list, got {values.describe(error.get('input'))}"
    return str(error["msg"])


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
        return ModelsFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise models_json_error(path, first["loc"], _problem(first)) from None


def parse_model_configs(models: Sequence[object]) -> list[ModelConfig]:
    """Validate a plugin provider's ``models`` list.

    :raises ValueError: the first problem, as ``models[0].contextWindow: expected …``
    """
    configs = []
    for index, raw in enumerate(models):
        try:
            configs.append(ModelConfig.model_validate(raw))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            key = values.format_key(["models", index, *first["loc"]])
            raise ValueError(f"{key}: {_problem(first)}") from None
    return configs
