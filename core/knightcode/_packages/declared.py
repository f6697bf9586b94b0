"""The ``packages`` entries of one settings file: reading them, recording and forgetting one.

An entry is a source string or an object ``{"source": ..., "skills": [...], ...}`` whose other
keys filter the package's resources; recording a new version of a package keeps those keys.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from knightcode._config.edit_settings import set_setting
from knightcode._config.jsonfile import read_json_object
from knightcode._config.loading import SETTINGS_FILENAME
from knightcode._config.paths import project_config_dir
from knightcode._config.values import check_packages
from knightcode._errors import SettingsError
from knightcode._packages.sources import Source, parse_source

Scope = Literal["user", "project"]
Entry = str | dict[str, object]


@dataclass(frozen=True)
class Declared:
    """One package named by a settings file.

    :param entry: the entry as written
    :param source: its parsed source
    :param scope: ``user`` (the agent dir's settings) or ``project`` (``.knightcode/``)
    :param root: the directory that holds the scope's settings and ``packages/`` folder
    """

    entry: Entry
    source: Source
    scope: Scope
    root: Path

    def filters(self) -> dict[str, object]:
        """The object form's keys other than ``source`` (resource filters)."""
        if isinstance(self.entry, dict):
            return {key: value for key, value in self.entry.items() if key != "source"}
        return {}


def scope_root(scope: Scope, agent_dir: Path, cwd: Path) -> Path:
    """The agent dir for ``user``, the project's ``.knightcode/`` for ``project``."""
    return agent_dir if scope == "user" else project_config_dir(cwd)


def _entries(settings_path: Path, data: dict[str, object] | None) -> list[Entry]:
    value = (data or {}).get("packages", [])
    problem = check_packages(value)
    if problem is not None:
        raise SettingsError(str(settings_path), "packages", problem)
    assert isinstance(value, list)
    return list(value)


def entry_source_text(entry: Entry) -> str:
    """The source string of an entry in either form."""
    return entry if isinstance(entry, str) else str(entry["source"])


def parse_entries(entries: list[Entry], scope: Scope, root: Path) -> list[Declared]:
    """Parse settings entries; relative paths are relative to ``root`` (the settings' folder)."""
    return [
        Declared(entry, parse_source(entry_source_text(entry), root), scope, root)
        for entry in entries
    ]


def read_declared(scope: Scope, root: Path) -> list[Declared]:
    """The packages the settings file in ``root`` declares.

    :raises SettingsError: ``packages`` is malformed, or one of its sources is
    """
    path = root / SETTINGS_FILENAME
    return parse_entries(_entries(path, read_json_object(path)), scope, root)


def settings_text(source: Source, root: Path) -> str:
    """How a source is recorded: a local directory relative to ``root`` when it is inside the
    folder that holds ``root`` (a project's own package travels with its checkout), else
    absolute; a pip file absolute; other sources as typed.
    """
    if source.kind == "pip" and os.path.isabs(source.target):
        return f"pip:{source.target}"  # a wheel file: absolute, whatever folder it was typed in
    if source.kind != "local":
        return source.text.strip()
    path = Path(source.target)
    if path.is_relative_to(root.parent):
        return os.path.relpath(path, root)
    return str(path)


def record(source: Source, root: Path) -> bool:
    """Declare ``source`` in ``root``'s settings, replacing an entry of the same package.

    :returns: False when an entry of the same package was replaced, True when one was added
    """
    path = root / SETTINGS_FILENAME
    entries = _entries(path, read_json_object(path))
    text = settings_text(source, root)
    for index, declared in enumerate(parse_entries(entries, "user", root)):
        if declared.source.identity == source.identity:
            old = entries[index]
            entries[index] = {**old, "source": text} if isinstance(old, dict) else text
            set_setting(path, "packages", entries)
            return False
    set_setting(path, "packages", [*entries, text])
    return True


def forget(source: Source, root: Path) -> Declared | None:
    """Remove the entries of ``source``'s package from ``root``'s settings.

    :returns: the (first) removed entry, or None when the package was not declared there
    """
    path = root / SETTINGS_FILENAME
    entries = _entries(path, read_json_object(path))
    declared = parse_entries(entries, "user", root)
    keep = [item.entry for item in declared if item.source.identity != source.identity]
    gone = [item for item in declared if item.source.identity == source.identity]
    if not gone:
        return None
    set_setting(path, "packages", keep)
    return gone[0]


def set_filters(source: Source, root: Path, kind: str, filters: list[str]) -> None:
    """Set one kind's filter list in the entry of ``source``'s package in ``root``'s settings;
    a string entry becomes the object form (``source`` first). Other entries and keys, their
    order and the file's mode are kept.

    :raises KeyError: the package is not declared there
    """
    path = root / SETTINGS_FILENAME
    entries = _entries(path, read_json_object(path))
    for index, declared in enumerate(parse_entries(entries, "user", root)):
        if declared.source.identity == source.identity:
            old = entries[index]
            entry: dict[str, object] = {"source": old} if isinstance(old, str) else dict(old)
            entry[kind] = filters
            entries[index] = entry
            set_setting(path, "packages", entries)
            return
    raise KeyError(source.text)
