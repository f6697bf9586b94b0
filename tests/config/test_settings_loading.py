"""Loading settings: the recursive merge, trust, origins, path lists and the session directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knightcode._config.loading import Settings
from knightcode._errors import SettingsError

WriteJson = Callable[[Path, Any], Path]


def load(agent_dir: Path, project_dir: Path, *, trusted: bool = True) -> Settings:
    return Settings.load(agent_dir, project_dir, project_trusted=trusted)


def test_missing_agent_dir_and_files_mean_defaults(tmp_path: Path) -> None:
    settings = load(tmp_path / "no-agent-dir", tmp_path / "no-project")
    assert settings.merged == {}
    assert settings.project_loaded is False
    assert settings.model.retry.max_retries == 3
    assert settings.model.steering_mode == "one-at-a-time"
    assert settings.model.compaction.reserve_tokens == 16384
    assert settings.extension_entries() == []
    assert settings.session_dir(tmp_path) is None


def test_objects_merge_at_every_depth(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(
        global_settings,
        {
            "theme": "dark",
            "compaction": {
                "enabled": False,
                "modelOverrides": {
                    "p/a": {"reserveTokens": 1, "keepRecentTokens": 2},
                    "p/b": {"reserveTokens": 3},
                },
            },
        },
    )
    write_json(
        project_settings,
        {
            "compaction": {"modelOverrides": {"p/a": {"keepRecentTokens": 20}, "p/c": {}}},
        },
    )
    settings = load(agent_dir, project_dir)
    assert settings.project_loaded is True
    assert settings.merged == {
        "theme": "dark",
        "compaction": {
            "enabled": False,
            "modelOverrides": {
                "p/a": {"reserveTokens": 1, "keepRecentTokens": 20},
                "p/b": {"reserveTokens": 3},
                "p/c": {},
            },
        },
    }


def test_arrays_and_scalars_are_replaced_whole(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(
        global_settings,
        {
            "extensions": ["a.py", "b.py"],
            "theme": "dark",
            "retry": {"maxRetries": 5},
            "terminal": 3,
        },
    )
    write_json(
        project_settings,
        {
            "extensions": ["c.py"],
            "theme": "light",
            "retry": 7,
            "terminal": {"showImages": False},
        },
    )
    merged = load(agent_dir, project_dir).merged
    assert merged["extensions"] == ["c.py"]
    assert merged["theme"] == "light"
    assert merged["retry"] == 7
    assert merged["terminal"] == {"showImages": False}


def test_untrusted_project_is_not_read(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(global_settings, {"theme": "dark"})
    write_json(project_settings, {"theme": "light", "extensions": ["evil.py"]})
    settings = load(agent_dir, project_dir, trusted=False)
    assert settings.project_loaded is False
    assert settings.merged == {"theme": "dark"}
    assert settings.extension_entries() == []


def test_trusted_project_without_settings_file_is_not_loaded(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(global_settings, {"theme": "dark"})
    settings = load(agent_dir, project_dir)
    assert settings.project_loaded is False
    assert settings.project_path == project_dir / ".knightcode" / "settings.json"
    assert settings.global_path == global_settings


def test_merge_does_not_change_the_file_data(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(global_settings, {"retry": {"maxRetries": 1}})
    write_json(project_settings, {"retry": {"baseDelayMs": 2}})
    settings = load(agent_dir, project_dir)
    settings.merged["retry"]["maxRetries"] = 99
    assert settings.origin(["retry", "maxRetries"]) == global_settings
    assert settings.get("retry.baseDelayMs") == 2


def test_get_walks_dotted_keys(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(global_settings, {"retry": {"provider": {"timeoutMs": 5}}, "theme": "x"})
    settings = load(agent_dir, project_dir)
    assert settings.get("retry.provider.timeoutMs") == 5
    assert settings.get("retry.provider") == {"timeoutMs": 5}
    assert settings.get("retry.nope", "d") == "d"
    assert settings.get("theme.deeper", "d") == "d"  # crossing a scalar is "absent"


def test_origin_names_the_file_that_supplied_a_value(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(global_settings, {"retry": {"maxRetries": 1, "baseDelayMs": 1}, "theme": "x"})
    write_json(project_settings, {"retry": {"baseDelayMs": 2}, "extensions": ["a"]})
    settings = load(agent_dir, project_dir)
    assert settings.origin(["retry", "maxRetries"]) == global_settings
    assert settings.origin(["retry", "baseDelayMs"]) == project_settings
    assert settings.origin(["theme"]) == global_settings
    assert settings.origin(["extensions", 0]) == project_settings
    assert settings.origin(["nowhere"]) == global_settings


def test_unknown_top_level_keys_are_kept_for_plugins(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(global_settings, {"myPlugin": {"colour": "red"}, "theme": "x"})
    settings = load(agent_dir, project_dir)
    assert settings.get("myPlugin.colour") == "red"
    assert settings.model.extra == {"myPlugin": {"colour": "red"}}
    assert settings.model.theme == "x"


def test_snake_case_names_are_not_settings(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    # Only the camelCase names are read, here as by the raw readers (compaction_for …).
    write_json(global_settings, {"retry": {"max_retries": 5}, "tool_timeout_ms": "x"})
    model = load(agent_dir, project_dir).model
    assert model.retry.max_retries == 3
    assert model.retry.extra == {"max_retries": 5}
    assert model.extra == {"tool_timeout_ms": "x"}


def test_model_uses_camel_case_json_names(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(
        global_settings,
        {
            "defaultThinkingLevel": "xhigh",
            "retry": {"provider": {"maxRetryDelayMs": 0}},
            "branchSummary": {"skipPrompt": True},
            "modelThinkingLevels": {"a/b": "low"},
            "editorPaddingX": 3,
            "defaultModel": None,
        },
    )
    model = load(agent_dir, project_dir).model
    assert model.default_thinking_level == "xhigh"
    assert model.retry.provider.max_retry_delay_ms == 0
    assert model.branch_summary.skip_prompt is True
    assert model.model_thinking_levels == {"a/b": "low"}
    assert model.editor_padding_x == 3
    assert model.default_model is None


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"queueMode": "all"}, "all"),
        ({"queueMode": "all", "steeringMode": "one-at-a-time"}, "one-at-a-time"),
    ],
)
def test_queue_mode_is_migrated_to_steering_mode(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    data: dict[str, str],
    expected: str,
) -> None:
    write_json(global_settings, data)
    settings = load(agent_dir, project_dir)
    assert settings.model.steering_mode == expected
    assert "queueMode" not in settings.merged


def test_extension_entries_carry_the_directory_of_their_file(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(global_settings, {"extensions": ["mine.py", "-builtin:web-tools"]})
    assert load(agent_dir, project_dir).extension_entries() == [
        ("mine.py", agent_dir),
        ("-builtin:web-tools", agent_dir),
    ]
    write_json(project_settings, {"extensions": ["local.py"]})
    assert load(agent_dir, project_dir).extension_entries() == [
        ("local.py", project_dir / ".knightcode"),
    ]


def test_path_entries_for_other_resource_lists(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, project_settings: Path
) -> None:
    write_json(project_settings, {"skills": ["skills/a"]})
    settings = load(agent_dir, project_dir)
    assert settings.path_entries("skills") == [("skills/a", project_dir / ".knightcode")]
    assert settings.path_entries("themes") == []


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("a.py", 'expected a list of strings, got "a.py"'),
        (["a.py", 3], "expected a list of strings, but item 1 is 3"),
    ],
)
def test_extension_entries_must_be_strings(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    project_settings: Path,
    value: object,
    problem: str,
) -> None:
    write_json(project_settings, {"extensions": value})
    with pytest.raises(SettingsError) as info:
        load(agent_dir, project_dir).extension_entries()
    assert str(info.value) == f"settings error in {project_settings}: extensions: {problem}"


def test_session_dir_of_an_untrusted_project_is_ignored(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(project_settings, {"sessionDir": ".sessions", "theme": "light"})
    settings = load(agent_dir, project_dir, trusted=False)
    assert settings.session_dir(project_dir) is None
    write_json(global_settings, {"sessionDir": "/global/sessions"})
    settings = load(agent_dir, project_dir, trusted=False)
    assert settings.session_dir(project_dir) == Path("/global/sessions")
    assert settings.get("theme") is None


def test_session_dir_falls_back_to_global_and_expands_tilde(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(global_settings, {"sessionDir": "~/sessions"})
    write_json(project_settings, {"theme": "light"})
    settings = load(agent_dir, project_dir, trusted=False)
    assert settings.session_dir(project_dir) == Path.home() / "sessions"


def test_session_dir_of_a_trusted_project_wins(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
    tmp_path: Path,
) -> None:
    write_json(global_settings, {"sessionDir": "/global/sessions"})
    write_json(project_settings, {"sessionDir": str(tmp_path / "s")})
    assert load(agent_dir, project_dir).session_dir(project_dir) == tmp_path / "s"


def test_session_dir_must_be_a_string(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, project_settings: Path
) -> None:
    write_json(project_settings, {"sessionDir": 5})
    load(agent_dir, project_dir, trusted=False).session_dir(project_dir)  # not read: untrusted
    with pytest.raises(SettingsError) as info:
        load(agent_dir, project_dir).session_dir(project_dir)
    assert str(info.value) == (
        f"settings error in {project_settings}: sessionDir: expected a string, got 5"
    )
