"""Small edits to the user's ``settings.json`` that leave everything else as it was.

``knightcode config`` turns plugins on and off by editing the ``extensions`` list only: every
other key, its value and the key order survive (the file is re-indented, which JSON cannot avoid
without a comment-preserving parser, but nothing the user wrote is lost).
"""

from __future__ import annotations

import stat
from pathlib import Path

from knightcode._config.jsonfile import read_json_object, write_json_atomic
from knightcode._config.values import InvalidSetting, check_str_list, expect
from knightcode._errors import SettingsError

_DEFAULT_MODE = 0o644


def set_plugin_enabled(settings_path: Path, plugin_name: str, enabled: bool) -> bool:
    """Block or unblock a plugin through the ``extensions`` list of a settings file.

    Disabling adds ``"-<plugin_name>"`` (once); enabling removes every ``"-<plugin_name>"``.
    Positive entries are paths to load and are never touched. The file (and its directory) is
    created when a change is needed and it does not exist; it keeps its permission bits.

    :returns: whether the file changed
    :raises ConfigError: the file is unreadable or not a JSON object; it is left untouched
    :raises SettingsError: ``extensions`` is not a list of strings; the file is left untouched
    """
    data = read_json_object(settings_path)
    existed = data is not None
    data = data if data is not None else {}
    try:
        entries: list[str] = expect(
            data.get("extensions", []), check_str_list, list, ("extensions",)
        )
    except InvalidSetting as exc:
        raise SettingsError(str(settings_path), "extensions", exc.problem) from None

    block = f"-{plugin_name}"
    if enabled:
        updated = [entry for entry in entries if entry != block]
    else:
        updated = entries if block in entries else [*entries, block]
    if updated == entries:
        return False

    # Assigning to an existing key keeps its position, so the key order is preserved.
    data["extensions"] = updated
    mode = stat.S_IMODE(settings_path.stat().st_mode) if existed else _DEFAULT_MODE
    write_json_atomic(settings_path, data, mode=mode)
    return True


def set_setting(settings_path: Path, key: str, value: object) -> None:
    """Set one setting (``key`` may be dotted: ``compaction.enabled``; ``None`` removes it),
    keeping every other key, its value and the key order, and the file's permission bits (as
    the interactive UI does for ``/settings``, the model choice and ``enabledModels``).

    :raises ConfigError: the file is unreadable or not a JSON object; it is left untouched
    """
    data = read_json_object(settings_path)
    existed = data is not None
    root: dict[str, object] = dict(data) if data is not None else {}
    *parents, leaf = key.split(".")
    node = root
    for part in parents:
        child = node.get(part)
        child = dict(child) if isinstance(child, dict) else {}
        node[part] = child
        node = child
    if value is None:
        if leaf not in node:
            return
        del node[leaf]
    else:
        if leaf in node and node[leaf] == value and type(node[leaf]) is type(value):
            return
        node[leaf] = value
    mode = stat.S_IMODE(settings_path.stat().st_mode) if existed else _DEFAULT_MODE
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(settings_path, root, mode)
