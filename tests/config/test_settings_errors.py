"""Every way a settings file can be wrong, and the one-line message the user gets for it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knightcode._config.loading import Settings
from knightcode._errors import ConfigError, SettingsError

WriteJson = Callable[[Path, Any], Path]
SAFE = 2**53 - 1


def model_error(agent_dir: Path, project_dir: Path) -> str:
    settings = Settings.load(agent_dir, project_dir, project_trusted=True)
    with pytest.raises(SettingsError) as info:
        _ = settings.model
    return str(info.value)


def test_invalid_json_reports_line_and_column(
    agent_dir: Path, project_dir: Path, global_settings: Path
) -> None:
    global_settings.write_text('{\n  "theme": "dark"\n  "quietStartup": true\n}\n')
    with pytest.raises(ConfigError) as info:
        Settings.load(agent_dir, project_dir, project_trusted=False)
    assert str(info.value) == (
        f"{global_settings}: invalid JSON at line 3 column 3: Expecting ',' delimiter"
    )


def test_invalid_json_in_untrusted_project_is_not_read(
    agent_dir: Path, project_dir: Path, project_settings: Path
) -> None:
    project_settings.parent.mkdir()
    project_settings.write_text("{oops")
    assert Settings.load(agent_dir, project_dir, project_trusted=False).merged == {}
    with pytest.raises(ConfigError, match="invalid JSON at line 1 column 2"):
        Settings.load(agent_dir, project_dir, project_trusted=True)


def test_file_that_is_not_an_object(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, project_settings: Path
) -> None:
    write_json(project_settings, ["theme", "dark"])
    with pytest.raises(ConfigError) as info:
        Settings.load(agent_dir, project_dir, project_trusted=True)
    assert "must be a JSON object" in str(info.value)
    assert str(info.value).startswith(str(project_settings))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"retry": {"maxRetries": "3"}},
            'retry.maxRetries: expected a non-negative integer, got "3"',
        ),
        (
            {"retry": {"maxRetries": -1}},
            "retry.maxRetries: expected a non-negative integer, got -1",
        ),
        (
            {"retry": {"maxRetries": True}},
            "retry.maxRetries: expected a non-negative integer, got true",
        ),
        (
            {"retry": {"baseDelayMs": 1.5}},
            "retry.baseDelayMs: expected a non-negative integer, got 1.5",
        ),
        (
            {"retry": {"baseDelayMs": 2.0}},
            "retry.baseDelayMs: expected a non-negative integer, got 2.0",
        ),
        (
            {"retry": {"provider": {"timeoutMs": SAFE + 1}}},
            f"retry.provider.timeoutMs: expected a non-negative integer no larger than {SAFE}, got "
            + str(SAFE + 1),
        ),
        (
            {"compaction": {"keepRecentTokens": None}},
            "compaction.keepRecentTokens: expected a non-negative integer, got null",
        ),
        (
            {"thinkingBudgets": {"low": -5}},
            "thinkingBudgets.low: expected a non-negative integer, got -5",
        ),
        ({"toolTimeoutMs": "60s"}, 'toolTimeoutMs: expected a non-negative integer, got "60s"'),
        (
            {"steeringMode": "sometimes"},
            'steeringMode: expected one of "all", "one-at-a-time", got "sometimes"',
        ),
        (
            {"transport": "carrier-pigeon"},
            (
                'transport: expected one of "sse", "websocket", "websocket-cached", "auto", '
                'got "carrier-pigeon"'
            ),
        ),
        (
            {"defaultProjectTrust": True},
            'defaultProjectTrust: expected one of "ask", "always", "never", got true',
        ),
        (
            {"modelThinkingLevels": {"a/b.c": "huge"}},
            (
                'modelThinkingLevels.a/b.c: expected one of "off", "minimal", "low", "medium", '
                '"high", "xhigh", "max", got "huge"'
            ),
        ),
        ({"hideThinkingBlock": "yes"}, 'hideThinkingBlock: expected true or false, got "yes"'),
        ({"images": {"blockImages": 1}}, "images.blockImages: expected true or false, got 1"),
        ({"theme": 5}, "theme: expected a string, got 5"),
        (
            {"markdown": {"codeBlockIndent": 2}},
            "markdown.codeBlockIndent: expected a string, got 2",
        ),
        ({"compaction": [1]}, "compaction: expected an object, got [1]"),
        ({"retry": {"provider": "fast"}}, 'retry.provider: expected an object, got "fast"'),
        (
            {"compaction": {"modelOverrides": {"a/b": 5}}},
            "compaction.modelOverrides.a/b: expected an object, got 5",
        ),
        (
            {"compaction": {"modelOverrides": []}},
            "compaction.modelOverrides: expected an object, got []",
        ),
        ({"editorPaddingX": 4}, "editorPaddingX: expected an integer from 0 to 3, got 4"),
        ({"outputPad": True}, "outputPad: expected an integer from 0 to 1, got true"),
        (
            {"autocompleteMaxVisible": 2},
            "autocompleteMaxVisible: expected an integer from 3 to 20, got 2",
        ),
        (
            {"enabledModels": "claude-*"},
            'enabledModels: expected a list of strings, got "claude-*"',
        ),
        ({"skills": ["a", {"b": 1}]}, 'skills: expected a list of strings, but item 1 is {"b": 1}'),
        (
            {"packages": ["ok", {"skills": []}]},
            (
                'packages: expected a package source string or an object with a "source" string, '
                'but item 1 is {"skills": []}'
            ),
        ),
    ],
)
def test_bad_values_are_named_by_file_and_key(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    data: dict[str, Any],
    message: str,
) -> None:
    write_json(global_settings, data)
    assert model_error(agent_dir, project_dir) == f"settings error in {global_settings}: {message}"


def test_exponent_numbers_are_floats_and_rejected(
    agent_dir: Path, project_dir: Path, global_settings: Path
) -> None:
    global_settings.write_text('{"compaction": {"reserveTokens": 1e3}}')
    assert model_error(agent_dir, project_dir) == (
        f"settings error in {global_settings}: "
        "compaction.reserveTokens: expected a non-negative integer, got 1000.0"
    )


def test_long_values_are_shortened(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(global_settings, {"theme": list(range(100))})
    shown = json.dumps(list(range(100)))[:59] + "…"
    assert model_error(agent_dir, project_dir) == (
        f"settings error in {global_settings}: theme: expected a string, got {shown}"
    )


def test_the_project_file_is_blamed_for_its_own_values(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(global_settings, {"retry": {"maxRetries": 3}})
    write_json(project_settings, {"retry": {"baseDelayMs": "x"}})
    assert model_error(agent_dir, project_dir) == (
        f"settings error in {project_settings}: "
        'retry.baseDelayMs: expected a non-negative integer, got "x"'
    )


def test_the_global_file_is_blamed_when_the_project_does_not_set_the_key(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(global_settings, {"retry": {"maxRetries": -2}})
    write_json(project_settings, {"retry": {"baseDelayMs": 10}})
    assert model_error(agent_dir, project_dir).startswith(
        f"settings error in {global_settings}: retry.maxRetries:"
    )


def test_a_project_value_fixes_a_bad_global_value(
    agent_dir: Path,
    project_dir: Path,
    write_json: WriteJson,
    global_settings: Path,
    project_settings: Path,
) -> None:
    write_json(global_settings, {"theme": 5})
    write_json(project_settings, {"theme": "light"})
    settings = Settings.load(agent_dir, project_dir, project_trusted=True)
    assert settings.model.theme == "light"


def test_zero_and_null_optionals_are_accepted(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(
        global_settings,
        {
            "compaction": {"reserveTokens": 0, "keepRecentTokens": 0},
            "retry": {"maxRetries": 0},
            "httpProxy": None,
            "thinkingBudgets": {"high": SAFE},
        },
    )
    model = Settings.load(agent_dir, project_dir, project_trusted=False).model
    assert model.compaction.reserve_tokens == 0
    assert model.retry.max_retries == 0
    assert model.http_proxy is None
    assert model.thinking_budgets.high == SAFE


def test_model_override_contents_are_not_validated_by_the_model(
    agent_dir: Path, project_dir: Path, write_json: WriteJson, global_settings: Path
) -> None:
    write_json(global_settings, {"compaction": {"modelOverrides": {"a/b": {"reserveTokens": -1}}}})
    model = Settings.load(agent_dir, project_dir, project_trusted=False).model
    assert model.compaction.model_overrides == {"a/b": {"reserveTokens": -1}}
