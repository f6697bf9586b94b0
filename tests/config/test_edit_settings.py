"""``set_plugin_enabled``: editing only the ``extensions`` list of the user settings."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knightcode._config.edit_settings import set_plugin_enabled
from knightcode._errors import ConfigError, SettingsError

WriteJson = Callable[[Path, Any], Path]


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_disable_adds_a_block_entry_and_keeps_everything_else(
    write_json: WriteJson, global_settings: Path
) -> None:
    original = {"theme": "dark", "extensions": ["mine.py"], "retry": {"maxRetries": 1}, "z": [1]}
    write_json(global_settings, original)
    assert set_plugin_enabled(global_settings, "builtin:llama.cpp", False) is True
    data = read(global_settings)
    assert list(data) == ["theme", "extensions", "retry", "z"]
    assert data == {**original, "extensions": ["mine.py", "-builtin:llama.cpp"]}


def test_disable_twice_adds_no_duplicate(write_json: WriteJson, global_settings: Path) -> None:
    write_json(global_settings, {"extensions": ["-web"]})
    before = global_settings.stat().st_mtime_ns
    assert set_plugin_enabled(global_settings, "web", False) is False
    assert read(global_settings) == {"extensions": ["-web"]}
    assert global_settings.stat().st_mtime_ns == before


def test_enable_removes_block_entries_only(write_json: WriteJson, global_settings: Path) -> None:
    write_json(global_settings, {"extensions": ["-web", "web", "a.py", "-web", "-other"], "k": 1})
    assert set_plugin_enabled(global_settings, "web", True) is True
    assert read(global_settings) == {"extensions": ["web", "a.py", "-other"], "k": 1}
    assert set_plugin_enabled(global_settings, "web", True) is False


def test_missing_file_is_created_when_needed(tmp_path: Path) -> None:
    path = tmp_path / "new" / "agent" / "settings.json"
    assert set_plugin_enabled(path, "x", True) is False
    assert not path.exists()
    assert set_plugin_enabled(path, "x", False) is True
    assert read(path) == {"extensions": ["-x"]}
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_key_is_added_at_the_end_when_absent(write_json: WriteJson, global_settings: Path) -> None:
    write_json(global_settings, {"b": 1, "a": 2})
    set_plugin_enabled(global_settings, "x", False)
    assert list(read(global_settings)) == ["b", "a", "extensions"]


def test_file_mode_is_kept(write_json: WriteJson, global_settings: Path) -> None:
    write_json(global_settings, {})
    global_settings.chmod(0o600)
    set_plugin_enabled(global_settings, "x", False)
    assert stat.S_IMODE(global_settings.stat().st_mode) == 0o600


def test_invalid_json_is_never_overwritten(global_settings: Path) -> None:
    global_settings.write_text('{"theme": "dark",}')
    with pytest.raises(ConfigError, match="invalid JSON at line 1 column 18"):
        set_plugin_enabled(global_settings, "x", False)
    assert global_settings.read_text() == '{"theme": "dark",}'


def test_extensions_must_be_a_list_of_strings(write_json: WriteJson, global_settings: Path) -> None:
    write_json(global_settings, {"extensions": "a.py"})
    with pytest.raises(SettingsError) as info:
        set_plugin_enabled(global_settings, "x", False)
    assert str(info.value) == (
        f'settings error in {global_settings}: extensions: expected a list of strings, got "a.py"'
    )
    assert read(global_settings) == {"extensions": "a.py"}
