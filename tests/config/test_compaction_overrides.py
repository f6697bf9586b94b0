"""Per-model compaction budgets (spec/compaction.md, "Per-model overrides")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knightcode._config.compaction_settings import CompactionSettings
from knightcode._config.loading import Settings
from knightcode._errors import SettingsError

WriteJson = Callable[[Path, Any], Path]

SPEC_EXAMPLE = {
    "compaction": {
        "reserveTokens": 16384,
        "keepRecentTokens": 20000,
        "modelOverrides": {"some-provider/big-model": {"reserveTokens": 400000}},
    }
}


def settings(agent_dir: Path, project_dir: Path) -> Settings:
    return Settings.load(agent_dir, project_dir, project_trusted=True)


def error_of(settings: Settings, provider: str | None, model: str | None) -> str:
    with pytest.raises(SettingsError) as info:
        settings.compaction_for(provider, model)
    return str(info.value)


def test_no_settings_means_built_in_defaults(agent_dir: Path, project_dir: Path) -> None:
    assert settings(agent_dir, project_dir).compaction_for("p", "m") == CompactionSettings(
        enabled=True, reserve_tokens=16384, keep_recent_tokens=20000
    )


def test_spec_example_big_model(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(global_settings, SPEC_EXAMPLE)
    loaded = settings(agent_dir, project_dir)
    big = loaded.compaction_for("some-provider", "big-model")
    assert (big.reserve_tokens, big.keep_recent_tokens) == (400000, 20000)
    # A 1M window compacts above 600K tokens.
    assert 1_000_000 - big.reserve_tokens == 600_000
    other = loaded.compaction_for("some-provider", "small-model")
    assert (other.reserve_tokens, other.keep_recent_tokens) == (16384, 20000)


def test_each_value_falls_back_on_its_own(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(
        global_settings,
        {
            "compaction": {
                "keepRecentTokens": 5000,
                "modelOverrides": {
                    "p/keep": {"keepRecentTokens": 7},
                    "p/reserve": {"reserveTokens": 9},
                },
            }
        },
    )
    loaded = settings(agent_dir, project_dir)
    keep = loaded.compaction_for("p", "keep")
    assert (keep.reserve_tokens, keep.keep_recent_tokens) == (16384, 7)  # default, override
    reserve = loaded.compaction_for("p", "reserve")
    assert (reserve.reserve_tokens, reserve.keep_recent_tokens) == (9, 5000)  # override, ordinary


def test_enabled_is_global(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(
        global_settings,
        {
            "compaction": {
                "enabled": False,
                "modelOverrides": {"p/m": {"reserveTokens": 1}},
            }
        },
    )
    assert settings(agent_dir, project_dir).compaction_for("p", "m").enabled is False


def test_enabled_in_an_override_is_rejected(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(global_settings, {"compaction": {"modelOverrides": {"p/m": {"enabled": False}}}})
    assert error_of(settings(agent_dir, project_dir), "p", "m") == (
        f"settings error in {global_settings}: compaction.modelOverrides.p/m.enabled: "
        "enabled is not model-specific; set compaction.enabled instead"
    )


def test_global_model_value_beats_project_wide_fallback(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(
        global_settings, {"compaction": {"modelOverrides": {"p/m": {"reserveTokens": 1000}}}}
    )
    write_json(project_settings, {"compaction": {"reserveTokens": 5000}})
    loaded = settings(agent_dir, project_dir)
    assert loaded.compaction_for("p", "m").reserve_tokens == 1000
    assert loaded.compaction_for("p", "other").reserve_tokens == 5000


def test_project_override_of_the_same_model_wins_field_by_field(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(
        global_settings,
        {
            "compaction": {
                "modelOverrides": {
                    "p/m": {"reserveTokens": 1000, "keepRecentTokens": 300},
                }
            }
        },
    )
    write_json(
        project_settings, {"compaction": {"modelOverrides": {"p/m": {"reserveTokens": 2000}}}}
    )
    resolved = settings(agent_dir, project_dir).compaction_for("p", "m")
    assert (resolved.reserve_tokens, resolved.keep_recent_tokens) == (2000, 300)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ('"400000"', '"400000"'),
        ("-1", "-1"),
        ("true", "true"),
        ("1.5", "1.5"),
        ("2.0", "2.0"),
        ("1e3", "1000.0"),
        ("null", "null"),
    ],
)
def test_invalid_matching_override_names_key_and_file(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
    raw: str,
    shown: str,
) -> None:
    write_json(
        global_settings, {"compaction": {"modelOverrides": {"p/m": {"keepRecentTokens": 1}}}}
    )
    project_settings.parent.mkdir()
    project_settings.write_text(
        '{"compaction": {"modelOverrides": {"p/m": {"reserveTokens": ' + raw + "}}}}"
    )
    assert error_of(settings(agent_dir, project_dir), "p", "m") == (
        f"settings error in {project_settings}: compaction.modelOverrides.p/m.reserveTokens: "
        f"expected a non-negative integer, got {shown}"
    )


def test_invalid_values_of_other_models_are_not_looked_at(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(
        global_settings,
        {
            "compaction": {
                "modelOverrides": {
                    "p/other": {"reserveTokens": "lots", "keepRecentTokens": -4, "enabled": 1},
                    "p/m": {"keepRecentTokens": 10},
                }
            }
        },
    )
    assert settings(agent_dir, project_dir).compaction_for("p", "m").keep_recent_tokens == 10


def test_every_override_entry_must_be_an_object(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(
        global_settings,
        {
            "compaction": {
                "modelOverrides": {
                    "p/m": {"reserveTokens": 1},
                    "p/other": 400000,
                }
            }
        },
    )
    loaded = settings(agent_dir, project_dir)
    expected = (
        f"settings error in {global_settings}: compaction.modelOverrides.p/other: "
        "expected an object, got 400000"
    )
    assert error_of(loaded, "p", "m") == expected
    assert error_of(loaded, None, None) == expected


def test_model_overrides_must_be_an_object(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, project_settings: Path
) -> None:
    write_json(project_settings, {"compaction": {"modelOverrides": ["p/m"]}})
    assert error_of(settings(agent_dir, project_dir), "p", "m") == (
        f"settings error in {project_settings}: compaction.modelOverrides: "
        'expected an object, got ["p/m"]'
    )


def test_invalid_ordinary_value_is_an_error_even_with_a_valid_override(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(
        global_settings,
        {
            "compaction": {
                "reserveTokens": -1,
                "modelOverrides": {"p/m": {"reserveTokens": 10}},
            }
        },
    )
    assert error_of(settings(agent_dir, project_dir), "p", "m") == (
        f"settings error in {global_settings}: compaction.reserveTokens: "
        "expected a non-negative integer, got -1"
    )


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"enabled": "yes"}, "compaction.enabled"),
        ({"keepRecentTokens": 1.0}, "compaction.keepRecentTokens"),
    ],
)
def test_invalid_ordinary_values(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    section: dict[str, Any],
    key: str,
) -> None:
    write_json(global_settings, {"compaction": section})
    assert f": {key}: expected" in error_of(settings(agent_dir, project_dir), "p", "m")


def test_compaction_must_be_an_object(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(global_settings, {"compaction": True})
    assert error_of(settings(agent_dir, project_dir), "p", "m") == (
        f"settings error in {global_settings}: compaction: expected an object, got true"
    )


def test_zero_is_accepted(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(
        global_settings,
        {
            "compaction": {
                "keepRecentTokens": 0,
                "modelOverrides": {"p/m": {"reserveTokens": 0}},
            }
        },
    )
    resolved = settings(agent_dir, project_dir).compaction_for("p", "m")
    assert (resolved.reserve_tokens, resolved.keep_recent_tokens) == (0, 0)


def test_keys_are_exact_and_may_contain_slashes(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(
        global_settings,
        {
            "compaction": {
                "modelOverrides": {
                    "openrouter/anthropic/claude-sonnet-4": {"reserveTokens": 111},
                }
            }
        },
    )
    loaded = settings(agent_dir, project_dir)
    assert loaded.compaction_for("openrouter", "anthropic/claude-sonnet-4").reserve_tokens == 111
    assert loaded.compaction_for("OpenRouter", "anthropic/claude-sonnet-4").reserve_tokens == 16384
    assert loaded.compaction_for("openrouter", "claude-sonnet-4").reserve_tokens == 16384
    assert loaded.compaction_for("anthropic", "claude-sonnet-4").reserve_tokens == 16384


def test_no_active_model_uses_ordinary_values(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(
        global_settings,
        {
            "compaction": {
                "reserveTokens": 5,
                "modelOverrides": {"None/None": {"reserveTokens": 1}},
            }
        },
    )
    assert settings(agent_dir, project_dir).compaction_for(None, None).reserve_tokens == 5


def test_resolution_does_not_need_the_rest_of_the_settings_to_be_valid(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(global_settings, {"theme": 5, "compaction": {"reserveTokens": 7}})
    assert settings(agent_dir, project_dir).compaction_for("p", "m").reserve_tokens == 7


def test_reserve_tokens_set_is_recorded_for_the_small_window_rule() -> None:
    from knightcode._config.compaction_settings import resolve_compaction

    assert not resolve_compaction(None, "p", "m").reserve_tokens_set
    assert not resolve_compaction({"keepRecentTokens": 10}, "p", "m").reserve_tokens_set
    assert resolve_compaction({"reserveTokens": 10}, "p", "m").reserve_tokens_set
    override = {"modelOverrides": {"p/m": {"reserveTokens": 10}}}
    assert resolve_compaction(override, "p", "m").reserve_tokens_set
    assert not resolve_compaction(override, "p", "other").reserve_tokens_set
