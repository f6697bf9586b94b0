"""One tools.json setting changed by name (``scratchpad.inlineChars``), checked like the file.

``/tools`` and ``knightcode tools set`` both edit through :func:`set_value`: the file as it is is
checked first (a broken one is reported, never overwritten), then the file with the new value; a
wrong value is the same :class:`~.config.ToolsConfigError` a hand edit would get, naming the file
and the key, and nothing is written. Every other key, the Brave key included, is kept.

The settings that can be set are the ones ``knightcode tools show`` prints (:func:`~.config.
describe_config` of the defaults), so a key added there is settable here without a second list.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .config import (
    ToolsConfig,
    ToolsConfigError,
    describe_config,
    parse_tools_config,
    read_tools_json,
    tools_json_path,
    write_tools_json,
)

__all__ = ["flat_settings", "format_value", "parse_value", "set_value", "settable_keys"]

_NOT_SETTABLE = ("file", "braveApiKey")
"""``file`` is where the settings came from; the key has ``set-key`` and its masked input."""


def flat_settings(config: ToolsConfig) -> dict[str, object]:
    """Every setting of ``config`` by dotted name (``gate.thresholds.allow``), the key left out."""
    flat: dict[str, object] = {}

    def walk(node: Mapping[str, object], prefix: str) -> None:
        for name, value in node.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{name}.")
            elif f"{prefix}{name}" not in _NOT_SETTABLE:
                flat[f"{prefix}{name}"] = value

    walk(describe_config(config, environ={}), "")
    return flat


def settable_keys() -> dict[str, object]:
    """The settable names with their defaults (the default's type says how text is read)."""
    return flat_settings(ToolsConfig())


def parse_value(key: str, text: str) -> object:
    """``text`` typed for ``key``, as the JSON value to store; None for ``null`` (the default).

    A setting whose default is text or None takes the text as it is (``dir`` may be ``123``);
    the others take JSON (``20000``, ``0.5``, ``true``, ``["a.example"]``) and, when it is not
    JSON, the text itself, which the check then refuses with the file's own message ("must be
    a number").
    """
    text = text.strip()
    if text == "null":
        return None
    default = settable_keys().get(key)
    if default is None or isinstance(default, str):
        return text
    try:
        value: object = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text
    return value


def format_value(value: object) -> str:
    """A setting as a label shows it: ``on``/``off``, ``0.2``, ``none``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return f"{len(value)} item(s)" if value else "none"
    return str(value)


def set_value(agent_dir: Path, key: str, value: object) -> Path:
    """Store ``value`` under the dotted ``key`` in tools.json (None: remove it, back to the
    default), keeping every other key; atomically, mode 0600.

    :returns: the file written
    :raises ToolsConfigError: the file is broken, ``key`` is not a setting, or the value is
        wrong (the message names the file and the key); the file is then unchanged
    """
    path = tools_json_path(agent_dir)
    data = read_tools_json(path) or {}
    parse_tools_config(data, path)
    if key not in settable_keys():
        if key == "braveApiKey":
            raise ToolsConfigError(
                f"{path}: braveApiKey: set it with 'knightcode tools set-key brave' or /tools"
            )
        known = ", ".join(settable_keys())
        raise ToolsConfigError(f"{path}: {key}: not a setting (known: {known})")
    updated = _with_value(data, key.split("."), value)
    parse_tools_config(updated, path)
    write_tools_json(path, updated)
    return path


def _with_value(node: Mapping[str, object], parts: list[str], value: object) -> dict[str, object]:
    """A copy of ``node`` with ``parts`` set to ``value`` (None removes it and any section left
    empty, so "back to the default" leaves no ``{}`` behind).
    """
    copy = dict(node)
    head, rest = parts[0], parts[1:]
    if not rest:
        if value is None:
            copy.pop(head, None)
        else:
            copy[head] = value
        return copy
    child = copy.get(head)
    updated = _with_value(child if isinstance(child, dict) else {}, rest, value)
    if updated:
        copy[head] = updated
    else:
        copy.pop(head, None)
    return copy
