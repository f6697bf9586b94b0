"""Reading the global and project ``settings.json`` into one :class:`Settings`.

This module is on the start-up path of every command, so it does not import the settings tables
at import time: ``Settings.model`` imports them when first used (``--help`` never does), and the
values read before that (extensions, session directory, compaction budgets) are checked without
them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from knightcode._config.compaction_settings import CompactionSettings, resolve_compaction
from knightcode._config.jsonfile import read_json_object
from knightcode._config.merge import lookup, merge_settings, migrate_legacy, supplies
from knightcode._config.paths import expand_path, project_config_dir
from knightcode._config.values import (
    InvalidSetting,
    check_str,
    check_str_list,
    expect,
    format_key,
)
from knightcode._errors import SettingsError

if TYPE_CHECKING:
    from knightcode._config.settings import SettingsModel

SETTINGS_FILENAME = "settings.json"

_T = TypeVar("_T")


class Settings:
    """The user's settings: the global file with the trusted project file merged over it.

    Build it with :meth:`load`. ``merged`` is the raw JSON; :attr:`model` validates all of it,
    and the accessor methods read and check single values without the settings tables.

    :param global_path: ``<agent-dir>/settings.json``
    :param project_path: ``<cwd>/.knightcode/settings.json`` (whether or not it was read)
    :param global_data: the global file's contents (None when it does not exist)
    :param project_data: the project file's contents; None when absent or not trusted
    """

    def __init__(
        self,
        global_path: Path,
        project_path: Path,
        global_data: Mapping[str, object] | None = None,
        project_data: Mapping[str, object] | None = None,
    ) -> None:
        self.global_path = global_path
        self.project_path = project_path
        self._global = migrate_legacy(dict(global_data or {}))
        self._project = None if project_data is None else migrate_legacy(dict(project_data))
        self.project_loaded: bool = self._project is not None
        self.merged: dict[str, object] = merge_settings(self._global, self._project or {})

    @classmethod
    def load(cls, agent_dir: Path, cwd: Path, *, project_trusted: bool) -> Settings:
        """Read ``<agent_dir>/settings.json`` and, if trusted, ``<cwd>/.knightcode/settings.json``.

        Missing directories and files mean defaults.

        :raises ConfigError: a file that exists but cannot be read or parsed
        """
        global_path = agent_dir / SETTINGS_FILENAME
        project_path = project_config_dir(cwd) / SETTINGS_FILENAME
        project_data = read_json_object(project_path) if project_trusted else None
        return cls(global_path, project_path, read_json_object(global_path), project_data)

    @property
    def global_data(self) -> dict[str, object]:
        """The global file's own settings (after migration), before the project's are merged."""
        return self._global

    @property
    def project_data(self) -> dict[str, object] | None:
        """The project file's own settings; None when it is absent or not trusted."""
        return self._project

    def get(self, dotted_key: str, default: object = None) -> object:
        """The raw merged value at a dotted key (``"compaction.reserveTokens"``), unvalidated:
        any JSON value, for the caller to check (``isinstance``) before using it.
        """
        return lookup(self.merged, dotted_key.split("."), default)

    def origin(self, dotted_key_parts: Sequence[str | int]) -> Path:
        """The file that supplied the merged value at a key path: the project file if it
        defines that path (or replaced an array or scalar above it), else the global file.
        """
        return self.project_path if supplies(self._project, dotted_key_parts) else self.global_path

    def error(self, key_parts: Sequence[str | int], problem: str) -> SettingsError:
        """A :class:`SettingsError` for a bad value, blaming the file that supplied it."""
        return SettingsError(str(self.origin(key_parts)), format_key(key_parts), problem)

    @cached_property
    def model(self) -> SettingsModel:
        """Every setting, validated, with defaults filled in.

        :raises SettingsError: for the first invalid value, naming its file and key
        """
        from knightcode._config.settings import parse_settings

        return self._raising(lambda: parse_settings(self.merged))

    def path_entries(self, key: str) -> list[tuple[str, Path]]:
        """A path-list setting (``extensions``, ``skills``, ``prompts``, ``themes``) with the
        directory its relative entries are relative to: the directory of the file that set it.

        :raises SettingsError: the value is not a list of strings
        """
        value = self.merged.get(key)
        if value is None:
            return []
        entries: list[str] = self._raising(lambda: expect(value, check_str_list, list, (key,)))
        base_dir = self.origin((key,)).parent
        return [(entry, base_dir) for entry in entries]

    def extension_entries(self) -> list[tuple[str, Path]]:
        """The ``extensions`` setting as ``(entry, base dir)`` pairs.

        Entries are paths to load (relative to the base dir) or ``-NAME`` to block a plugin.
        """
        return self.path_entries("extensions")

    def session_dir(self, cwd: Path) -> Path | None:
        """The ``sessionDir`` setting, resolved against ``cwd``, or None when unset.

        The project's value wins over the global one, but only when the project is trusted: an
        untrusted repository that names a session directory of its own could otherwise hand
        ``knightcode -c`` a conversation it wrote (what the model "said", which tools it ran),
        so its value is ignored like every other key of its settings.

        :raises SettingsError: the value is not a string
        """
        for data, path in ((self._project, self.project_path), (self._global, self.global_path)):
            if data is not None and "sessionDir" in data:
                try:
                    value = expect(data["sessionDir"], check_str, str, ("sessionDir",))
                except InvalidSetting as exc:
                    raise SettingsError(str(path), "sessionDir", exc.problem) from None
                return expand_path(value, cwd)
        return None

    def compaction_for(self, provider: str | None, model_id: str | None) -> CompactionSettings:
        """Compaction settings in force for a model, with ``compaction.modelOverrides`` applied.

        :raises SettingsError: an invalid ordinary budget, a non-object override entry, or an
            invalid value in this model's override
        """
        section = self.merged.get("compaction")
        return self._raising(lambda: resolve_compaction(section, provider, model_id))

    def _raising(self, read: Callable[[], _T]) -> _T:
        """Run a reader, turning its :class:`InvalidSetting` into a file-naming SettingsError."""
        try:
            return read()
        except InvalidSetting as exc:
            raise self.error(exc.key_parts, exc.problem) from None
