"""The one keybinding registry: the spec's defaults, the user's ``keybindings.json``, plugin keys.

Everything that can be wrong in the user's file (an unknown action, a key not in the syntax, a
value of the wrong type, a file that cannot be read) becomes a warning rather than an error: a
typo in a key file must never keep the UI from starting, but the user has to learn about it.
The rules are those of the published JSON Schema (``schemas/keybindings.schema.json``, see
:mod:`knightcode._keys.schema`); ``tests/keys/test_schema.py`` checks that both agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._config.jsonfile import read_json_object
from knightcode._errors import ConfigError
from knightcode._keys.actions import ACTIONS, ACTIONS_BY_ID, MAIN, Platform, current_platform
from knightcode._keys.syntax import KeySyntaxError, canonical

if TYPE_CHECKING:
    from knightcode._plugins.context import HookContext
    from knightcode._plugins.definitions import ShortcutDefinition

__all__ = [
    "KEYBINDINGS_FILE",
    "RESERVED_ACTIONS",
    "Conflict",
    "HotkeyRow",
    "KeyRegistry",
    "PluginShortcut",
]

KEYBINDINGS_FILE = "keybindings.json"

RESERVED_ACTIONS: frozenset[str] = frozenset(
    {
        "app.interrupt",
        "app.clear",
        "app.exit",
        "app.suspend",
        "app.thinking.cycle",
        "app.model.cycleForward",
        "app.model.cycleBackward",
        "app.model.select",
        "app.tools.expand",
        "app.thinking.toggle",
        "app.editor.external",
        "app.message.followUp",
        "tui.input.submit",
        "tui.input.newLine",
        "tui.input.copy",
        "tui.editor.deleteToLineEnd",
    }
)
"""Actions whose keys a plugin shortcut cannot take, as in the reference: the keys a user needs
to stop, leave or steer the agent and to type a prompt must do so whatever plugins are loaded."""


@dataclass(frozen=True)
class Conflict:
    """One key claimed by several actions in the same context."""

    key: str
    context: str
    actions: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.key} is bound to {', '.join(self.actions)} (in {self.context})"


@dataclass(frozen=True)
class PluginShortcut:
    """A key a plugin registered (``register_shortcuts``), active in the main screen."""

    key: str
    plugin: str
    description: str
    handler: Callable[[HookContext], object]


@dataclass(frozen=True)
class HotkeyRow:
    """One line of ``/hotkeys``: the keys (joined, ``""`` when unbound), who acts, what it does."""

    keys: str
    action: str
    description: str
    section: str


class KeyRegistry:
    """Defaults + ``<agent-dir>/keybindings.json`` + plugin shortcuts, with look-ups both ways.

    :param agent_dir: the agent directory holding ``keybindings.json`` (None: defaults only)
    :param platform: whose defaults to use; detected when None
    """

    def __init__(self, agent_dir: Path | None, platform: Platform | None = None) -> None:
        self._path = None if agent_dir is None else agent_dir / KEYBINDINGS_FILE
        self._platform: Platform = platform or current_platform()
        self._keys: dict[str, tuple[str, ...]] = {}
        self._configured: set[str] = set()
        self._file_warnings: list[str] = []
        self._shortcut_warnings: list[str] = []
        self._shortcuts: dict[str, PluginShortcut] = {}
        self._pending: list[tuple[str, ShortcutDefinition]] = []
        self.reload()

    @property
    def path(self) -> Path | None:
        """The keybindings file read (it need not exist)."""
        return self._path

    @property
    def warnings(self) -> tuple[str, ...]:
        """Problems found in the file and in plugin shortcuts, in the order found."""
        return (*self._file_warnings, *self._shortcut_warnings)

    def reload(self) -> None:
        """Re-read ``keybindings.json`` and re-apply the plugin shortcuts (``/reload``)."""
        self._keys = {
            a.id: _dedup(canonical(k) for k in a.defaults(self._platform)) for a in ACTIONS
        }
        self._configured = set()
        self._file_warnings = []
        for action, keys in self._read_file().items():
            self._keys[action] = keys
            self._configured.add(action)
        self._apply_shortcuts()

    def _read_file(self) -> dict[str, tuple[str, ...]]:
        if self._path is None:
            return {}
        where = str(self._path)
        try:
            data = read_json_object(self._path)
        except ConfigError as exc:
            self._file_warnings.append(f"{exc}; using the default keybindings")
            return {}
        result: dict[str, tuple[str, ...]] = {}
        for action, value in (data or {}).items():
            if action == "$schema":
                if not isinstance(value, str):
                    self._file_warnings.append(f"{where}: $schema: {value!r} is not a string")
                continue
            if action not in ACTIONS_BY_ID:
                self._file_warnings.append(f"{where}: unknown action {action!r}, ignored")
                continue
            raw: list[object] = value if isinstance(value, list) else [value]
            keys: list[str] = []
            for item in raw:
                if not isinstance(item, str):
                    self._file_warnings.append(
                        f"{where}: {action}: {item!r} is not a key string, ignored"
                    )
                    continue
                try:
                    keys.append(canonical(item))
                except KeySyntaxError as exc:
                    self._file_warnings.append(f"{where}: {action}: {exc}, ignored")
            if raw and not keys:
                # Every key was invalid: keep the defaults rather than silently unbinding.
                continue
            result[action] = _dedup(keys)
        return result

    def add_shortcuts(self, shortcuts: Iterable[tuple[str, ShortcutDefinition]]) -> None:
        """Add plugin shortcuts, ``(plugin name, definition)`` in registration order.

        A shortcut on a key of a :data:`RESERVED_ACTIONS` action is refused with a warning; one on
        another action's key takes it (warned); between plugins the last one wins (warned), as
        in the reference.
        """
        self._pending.extend(shortcuts)
        self._apply_shortcuts()

    def set_shortcuts(self, shortcuts: Iterable[tuple[str, ShortcutDefinition]]) -> None:
        """Replace every plugin shortcut (the plugins were reloaded)."""
        self._pending = list(shortcuts)
        self._apply_shortcuts()

    def _apply_shortcuts(self) -> None:
        self._shortcuts = {}
        self._shortcut_warnings = []
        for plugin, definition in self._pending:
            try:
                key = canonical(definition.key)
            except KeySyntaxError as exc:
                self._shortcut_warnings.append(f"plugin {plugin}: shortcut {exc}, ignored")
                continue
            taken = self.actions_for(key, MAIN, plugins=False)
            reserved = [action for action in taken if action in RESERVED_ACTIONS]
            if reserved:
                self._shortcut_warnings.append(
                    f"plugin {plugin}: shortcut {key} is reserved for {reserved[0]}, refused"
                )
                continue
            if taken:
                self._shortcut_warnings.append(
                    f"plugin {plugin}: shortcut {key} overrides {', '.join(taken)}"
                )
            previous = self._shortcuts.get(key)
            if previous is not None:
                self._shortcut_warnings.append(
                    f"plugin {plugin}: shortcut {key} replaces the one of plugin {previous.plugin}"
                )
            self._shortcuts[key] = PluginShortcut(
                key, plugin, definition.description, definition.handler
            )

    def keys_for(self, action: str) -> tuple[str, ...]:
        """The active keys of ``action`` in canonical form (``()`` when unbound).

        :raises KeyError: ``action`` is not an action of the spec
        """
        return self._keys[action]

    def actions_for(self, key: str, context: str, *, plugins: bool = True) -> tuple[str, ...]:
        """Every action bound to ``key`` in ``context``, in the spec's order (which is also the
        precedence: editor actions before application actions).
        """
        wanted = canonical(key)
        if plugins and context == MAIN and wanted in self._shortcuts:
            return ()
        return tuple(a.id for a in ACTIONS if context in a.contexts and wanted in self._keys[a.id])

    def action_for(self, key: str, context: str) -> str | None:
        """The action ``key`` triggers in ``context``, or None (also when a plugin shortcut has
        the key: see :meth:`shortcut_for`).
        """
        found = self.actions_for(key, context)
        return found[0] if found else None

    def shortcut_for(self, key: str) -> PluginShortcut | None:
        """The plugin shortcut on ``key`` in the main screen, if any."""
        return self._shortcuts.get(canonical(key))

    @property
    def shortcuts(self) -> tuple[PluginShortcut, ...]:
        """The plugin shortcuts in effect."""
        return tuple(self._shortcuts.values())

    @property
    def conflicts(self) -> tuple[Conflict, ...]:
        """Keys bound to several actions in one context where the user configured one of them.

        The spec's own defaults share keys on purpose (``ctrl+d`` deletes forward and, on an
        empty editor, exits), so overlaps among unconfigured actions are not reported.
        """
        claims: dict[tuple[str, str], list[str]] = {}
        for action in ACTIONS:
            for context in action.contexts:
                for key in self._keys[action.id]:
                    claims.setdefault((key, context), []).append(action.id)
        return tuple(
            Conflict(key, context, tuple(ids))
            for (key, context), ids in claims.items()
            if len(ids) > 1 and any(i in self._configured for i in ids)
        )

    def hotkeys(self) -> list[HotkeyRow]:
        """The rows of ``/hotkeys``: every action in the spec's order, then plugin shortcuts."""
        rows = [
            HotkeyRow(", ".join(self._keys[a.id]), a.id, a.description, a.section) for a in ACTIONS
        ]
        rows.extend(
            HotkeyRow(s.key, f"plugin:{s.plugin}", s.description, "Plugins")
            for s in self._shortcuts.values()
        )
        return rows


def _dedup(keys: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(keys))
