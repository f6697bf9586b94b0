"""``/settings``: the settings the reference's settings selector offers that knightcode has.

Each row is a setting with its current value and allowed values; confirm (and right) moves to
the next value, left to the previous one. The dialog has nothing to cancel: closing it
(``tui.select.cancel``) resolves the changed settings, ``{dotted key: value}`` (empty when
nothing changed), for the app to apply and save.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rich.text import Text

from knightcode._config.loading import Settings
from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.dialogs.base import (
    ACCENT,
    MUTED,
    WARNING,
    ListDialog,
    visible_window,
)

__all__ = ["SettingRow", "SettingValue", "SettingsDialog", "setting_rows"]

SettingValue = str | bool | int

_FLAG: tuple[SettingValue, ...] = (True, False)
THEME_DESCRIPTION = "Colours of the transcript, editor and footer (enter: pick with a preview)"
PICKED = frozenset({"theme"})
"""Rows whose confirm opens their values as a list: moving previews, esc restores."""
_DELIVERY: tuple[SettingValue, ...] = ("one-at-a-time", "all")


@dataclass(frozen=True)
class SettingRow:
    """One setting.

    :param key: the dotted ``settings.json`` key (``compaction.enabled``)
    :param label: the name shown
    :param description: one line on what it does
    :param value: the current value
    :param values: the allowed values, in cycling order
    """

    key: str
    label: str
    description: str
    value: SettingValue
    values: tuple[SettingValue, ...]


def format_value(value: SettingValue) -> str:
    """``true``/``false`` for flags, the value otherwise."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# (key, label, description, default, values) in the reference's order; a None ``values`` is
# filled by setting_rows (the thinking levels the model supports).
_ROWS: tuple[tuple[str, str, str, SettingValue, tuple[SettingValue, ...] | None], ...] = (
    ("compaction.enabled", "Auto-compact", "Compact the context when it gets too large", True,
     _FLAG),
    ("terminal.showImages", "Show images", "Render images inline in the terminal", True, _FLAG),
    ("images.autoResize", "Auto-resize images", "Shrink large images before sending them",
     True, _FLAG),
    ("images.blockImages", "Block images", "Never send images to the model", False, _FLAG),
    ("enableSkillCommands", "Skill commands", "Register skills as /skill:name commands", True,
     _FLAG),
    ("steeringMode", "Steering mode", "Deliver queued steering messages all at once or one by one",
     "one-at-a-time", _DELIVERY),
    ("followUpMode", "Follow-up mode", "Deliver queued follow-ups all at once or one by one",
     "one-at-a-time", _DELIVERY),
    ("transport", "Transport", "How to stream from providers that offer a choice", "auto",
     ("auto", "sse", "websocket", "websocket-cached")),
    ("defaultThinkingLevel", "Thinking level", "Reasoning depth for thinking-capable models",
     "off", None),
    ("hideThinkingBlock", "Hide thinking", "Collapse thinking blocks in the transcript", False,
     _FLAG),
    ("collapseChangelog", "Collapse changelog", "Show a one-line changelog after updates",
     False, _FLAG),
    ("quietStartup", "Quiet startup", "Skip the start-up banner and listings", False, _FLAG),
    ("fullscreen", "Fullscreen", "Start in the alternate screen, transcript scrolled inside",
     False, _FLAG),
    ("fullscreenCopyOnSelect", "Copy on select", "Fullscreen: copy a mouse selection on release",
     True, _FLAG),
    ("doubleEscapeAction", "Double-escape action", "What escape twice on an empty editor does",
     "tree", ("tree", "fork", "none")),
    ("treeFilterMode", "Tree filter", "The /tree filter it opens with", "default",
     ("default", "no-tools", "user-only", "labeled-only", "all")),
    ("showHardwareCursor", "Hardware cursor", "Show the terminal's cursor in the editor", False,
     _FLAG),
    ("editorPaddingX", "Editor padding", "Columns of padding left and right of the editor", 0,
     (0, 1, 2, 3)),
    ("autocompleteMaxVisible", "Autocomplete rows", "Completion rows shown at most", 5,
     (3, 5, 7, 10, 15, 20)),
    ("terminal.clearOnShrink", "Clear on shrink", "Clear the screen when the UI gets shorter",
     False, _FLAG),
)  # fmt: skip


def setting_rows(
    settings: Settings,
    thinking_levels: Sequence[str] = ("off", "low", "medium", "high"),
    *,
    themes: Sequence[str] = (),
    theme: str = "dark",
) -> list[SettingRow]:
    """The rows for ``settings``' current values (a missing or invalid value shows the
    default).

    :param themes: the theme names to choose from (no ``Theme`` row without them)
    :param theme: the theme in use (setting ``theme`` may be unset: the terminal chose)
    """
    rows: list[SettingRow] = []
    for key, label, description, default, values in _ROWS:
        allowed = tuple(thinking_levels) if values is None else values
        raw = settings.get(key, default)
        # Same type and equal: True == 1, but a flag's value is never a count's.
        value = next((v for v in allowed if type(v) is type(raw) and v == raw), default)
        if value not in allowed:
            allowed = (value, *allowed)
        rows.append(SettingRow(key, label, description, value, allowed))
        if key == "hideThinkingBlock" and themes:  # the reference's place for it
            names = tuple(themes) if theme in themes else (theme, *themes)
            rows.append(SettingRow("theme", "Theme", THEME_DESCRIPTION, theme, names))
    return rows


class SettingsDialog(ListDialog[SettingRow, dict[str, SettingValue]]):
    """See the module docstring.

    :param rows: the settings (:func:`setting_rows`)
    :param on_change: called with each change as it is made (the app may apply it at once)
    """

    search_mode = "none"
    max_visible = 12

    def __init__(
        self,
        rows: Sequence[SettingRow],
        *,
        on_change: Callable[[str, SettingValue], None] | None = None,
        keys: KeyRegistry | None = None,
    ) -> None:
        super().__init__("Settings", rows, keys=keys)
        self._initial = {row.key: row.value for row in rows}
        self._on_change = on_change
        self._label_width = max((len(row.label) for row in rows), default=0)
        self._picking: SettingRow | None = None
        """The row whose values are listed (:data:`PICKED`), while they are."""
        self._pick_index = 0

    @property
    def changes(self) -> dict[str, SettingValue]:
        """The settings whose value differs from when the dialog opened."""
        return {row.key: row.value for row in self.items if row.value != self._initial.get(row.key)}

    def render_item(self, item: SettingRow, selected: bool) -> Text:
        """Name and value (marked when changed)."""
        row = Text(item.label.ljust(self._label_width), style=ACCENT if selected else "")
        changed = item.value != self._initial.get(item.key)
        row.append("  " + format_value(item.value), style=WARNING if changed else ACCENT)
        return row

    def render_body(self) -> Text:
        """The list and the selected setting's description (or a picked row's values)."""
        if self._picking is not None:
            return self._render_pick(self._picking)
        body = Text("\n").join(self.render_rows())
        if self.current is not None:
            body.append("\n\n  " + self.current.description, style=MUTED)
        return body

    def hint_text(self) -> str:
        """The keys."""
        if self._picking is not None:
            return "↑↓ preview · enter choose · esc cancel"
        return "enter/→ next value · ← previous value · esc close"

    def _render_pick(self, row: SettingRow) -> Text:
        lines = [Text(f"  {row.label}", style=MUTED)]
        for index in visible_window(self._pick_index, len(row.values), self.max_visible):
            selected = index == self._pick_index
            line = Text("→ " if selected else "  ", style=ACCENT if selected else "")
            line.append(format_value(row.values[index]), style=ACCENT if selected else "")
            if row.values[index] == row.value:
                line.append("  (current)", style=MUTED)
            lines.append(line)
        return Text("\n").join(lines)

    def _preview(self, row: SettingRow, value: SettingValue) -> None:
        if self._on_change is not None:
            self._on_change(row.key, value)

    def _perform_pick(self, row: SettingRow, action: str) -> None:
        """Keys while a row's values are listed: move (previewing), choose, or cancel
        (the value before restored).
        """
        count = len(row.values)
        if action in ("tui.select.up", "tui.select.down"):
            self._pick_index = (
                self._pick_index + (1 if action == "tui.select.down" else -1)
            ) % count
            self._preview(row, row.values[self._pick_index])
        elif action == "tui.select.confirm":
            chosen = replace(row, value=row.values[self._pick_index])
            self.items[self.items.index(row)] = chosen
            self.shown = list(self.items)
            self._picking = None
        elif action == "tui.select.cancel":
            self._preview(row, row.value)
            self._picking = None

    def _cycle(self, row: SettingRow, delta: int) -> None:
        index = row.values.index(row.value) if row.value in row.values else -1
        new = replace(row, value=row.values[(index + delta) % len(row.values)])
        position = self.items.index(row)
        self.items[position] = new
        self.shown = list(self.items)
        if self._on_change is not None:
            self._on_change(new.key, new.value)

    async def perform(self, action: str) -> bool:
        """Left/right cycle values; closing resolves the changes."""
        if self._picking is not None:
            self._perform_pick(self._picking, action)
            return True
        row = self.current
        if action in ("tui.select.left", "tui.select.right") and row is not None:
            self._cycle(row, -1 if action == "tui.select.left" else 1)
            return True
        if action == "tui.select.cancel":
            self.resolve(self.changes)
            return True
        return await super().perform(action)

    async def confirm(self, item: SettingRow) -> None:
        """Next value; a :data:`PICKED` row lists its values instead."""
        if item.key in PICKED:
            self._picking = item
            self._pick_index = item.values.index(item.value) if item.value in item.values else 0
            return
        self._cycle(item, 1)
