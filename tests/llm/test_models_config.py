"""models.json validation details beyond the registry tests: which problem comes first, hints for
misspelt keys, and the checks on a model list registered by a plugin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knightcode._errors import ConfigError
from knightcode._llm.models_config import parse_model_configs, parse_models_file
from knightcode._llm.registry import ModelRegistry


def models_file_error(data: object) -> str:
    with pytest.raises(ConfigError) as info:
        parse_models_file({"providers": {"local": data}}, "models.json")
    return str(info.value).removeprefix("models.json error in models.json: providers.local.")


def test_declared_fields_are_checked_before_unknown_keys() -> None:
    # "id" is declared first, so its absence wins over the misspelt key before it in the file.
    assert models_file_error({"models": [{"contextwindow": 5}]}) == "models[0].id: required"
    assert models_file_error({"models": [{"contextwindow": 5, "id": "a"}]}) == (
        'models[0].contextwindow: unknown key (did you mean "contextWindow"?)'
    )


def test_snake_case_keys_are_unknown_keys_with_a_hint() -> None:
    assert models_file_error({"base_url": "http://x"}) == (
        'base_url: unknown key (did you mean "baseUrl"?)'
    )
    assert models_file_error({"zzz": 1}) == "zzz: unknown key"


def test_null_is_accepted_only_for_optional_fields() -> None:
    parsed = parse_models_file(
        {"providers": {"local": {"baseUrl": None, "models": None}}}, "models.json"
    )
    assert parsed.providers["local"].base_url is None
    assert models_file_error({"headers": None}) == (
        "headers: expected an object whose values are strings, got null"
    )


def test_other_top_level_keys_are_ignored() -> None:
    parsed = parse_models_file({"$schema": "x", "providers": {}}, "models.json")
    assert parsed.providers == {}


def test_model_defaults_are_fresh_per_model() -> None:
    first, second = parse_model_configs([{"id": "a"}, {"id": "b", "input": ["text", "image"]}])
    assert (first.input, first.context_window, first.max_tokens) == (["text"], 128000, 16384)
    assert (first.cost.input, first.headers, first.compat) == (0.0, {}, {})
    first.input.append("image")
    assert parse_model_configs([{"id": "c"}])[0].input == ["text"]
    assert second.input == ["text", "image"]


def test_plugin_model_lists_name_the_position_of_the_bad_entry() -> None:
    with pytest.raises(ValueError, match=r"^models\[1\]: expected an object, got 3$"):
        parse_model_configs([{"id": "a"}, 3])
    with pytest.raises(ValueError, match=r'^models\[0\]\.cost: expected an object, got "free"$'):
        parse_model_configs([{"id": "a", "cost": "free"}])


def test_an_unknown_key_in_a_cost_override_gets_a_hint(agent_dir: Path) -> None:
    path = agent_dir / "models.json"
    overrides = {"gpt-5": {"cost": {"cacheread": 1}}}
    path.write_text(json.dumps({"providers": {"openai": {"modelOverrides": overrides}}}))
    with pytest.raises(ConfigError) as info:
        ModelRegistry(agent_dir, environ={})
    assert str(info.value) == (
        f"models.json error in {path}: providers.openai.modelOverrides.gpt-5.cost.cacheread: "
        'unknown key (did you mean "cacheRead"?)'
    )
