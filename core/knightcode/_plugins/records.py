"""What the host knows about each plugin: where it came from and how loading it went."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path


class PluginKind(enum.StrEnum):
    """Where a plugin came from, in load order (which is also the order its handlers run in)."""

    BUILTIN = "builtin"
    """An entry point of group ``knightcode.builtins`` (named ``builtin:<name>``)."""
    PACKAGE = "package"
    """An installed third-party entry point of group ``knightcode.plugins`` (``plugin:<name>``)."""
    USER = "user"
    """A file or folder in ``<agent-dir>/extensions/`` (``ext:<path>``)."""
    PROJECT = "project"
    """A file or folder in a trusted project's ``.knightcode/extensions/``."""
    SETTINGS = "settings"
    """A path listed in the settings ``extensions`` array."""
    CLI = "cli"
    """A path given with ``-e/--extension``."""

    @property
    def is_extension(self) -> bool:
        """Extensions are source files the host imports itself (and can hot-reload)."""
        return self not in (PluginKind.BUILTIN, PluginKind.PACKAGE)


class PluginStatus(enum.StrEnum):
    """The outcome of loading a plugin, as ``knightcode config list`` shows it."""

    LOADED = "loaded"
    DISABLED = "disabled"
    """Blocked by a ``-NAME`` settings entry; never imported."""
    FAILED = "failed"
    """Import or registration failed; the plugin is skipped, the reason is in ``error``."""
    MISSING = "missing"
    """A built-in the kernel expects but the installed metadata does not declare."""


@dataclass
class PluginRecord:
    """One plugin as the host sees it.

    :param name: ``builtin:<name>``, ``plugin:<name>`` or ``ext:<absolute path>``
    :param kind: where it came from
    :param source: the file or folder, or ``module:attr`` of an entry point
    :param order: position in load order (handlers run in this order)
    :param status: how loading went
    :param error: why it failed, one line, when it did
    :param plugin: the registered plugin object (a module) when loaded
    :param path: the file or folder of an extension (None for entry points)
    :param stamp: a fingerprint of the extension's source files, to notice edits on reload
    """

    name: str
    kind: PluginKind
    source: str
    order: int
    status: PluginStatus = PluginStatus.LOADED
    error: str | None = None
    plugin: object = None
    path: Path | None = None
    stamp: tuple[tuple[str, int, int], ...] = field(default_factory=tuple)

    @property
    def enabled(self) -> bool:
        """Loaded and taking part in hooks."""
        return self.status is PluginStatus.LOADED

    def as_json(self) -> dict[str, object]:
        """The record as ``knightcode config list --json`` prints it."""
        return {
            "name": self.name,
            "kind": self.kind.value,
            "source": self.source,
            "enabled": self.enabled,
            "status": self.status.value,
            "error": self.error,
        }
