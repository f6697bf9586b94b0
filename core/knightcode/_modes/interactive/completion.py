"""Autocomplete for the prompt editor: ``/`` commands, ``@`` file references, Tab paths.

Providers are plain functions of the text before the cursor, so they are tested without a
terminal; :class:`CompletionProvider` picks the one the context calls for, and
:class:`CompletionMenu` shows the result.  The editor owns the state (which items, which one is
selected) and tells the app through a message; the app decides where the menu goes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from rich.text import Text
from textual.widget import Widget

from knightcode._modes.interactive.file_index import FileIndex

__all__ = [
    "MENU_ROWS",
    "ArgumentCompleter",
    "CommandInfo",
    "CompletionItem",
    "CompletionMenu",
    "CompletionProvider",
    "Suggestions",
    "command_suggestions",
    "completion_insert",
    "file_suggestions",
    "path_suggestions",
]

MENU_ROWS = 8
"""The most rows the menu takes: it sits in the inline region, which must stay small."""

_MAX_PATH_ITEMS = 200


@dataclass(frozen=True)
class CompletionItem:
    """One choice: ``value`` is what goes into the text, ``label``/``description`` are shown."""

    value: str
    label: str
    description: str = ""


ArgumentCompleter = Callable[[str], Sequence[CompletionItem]]
"""Completes a command's argument: given the argument typed so far, the choices."""


@dataclass(frozen=True)
class CommandInfo:
    """A slash command offered by ``/`` completion.

    :param name: without the slash
    :param source: who provides it (``builtin``, a plugin's name, ``prompt`` for templates)
    :param arguments: completes the argument after ``/name ``, when the command has one
    """

    name: str
    description: str
    source: str
    arguments: ArgumentCompleter | None = None


CompletionKind = Literal["command", "argument", "file", "path"]


@dataclass(frozen=True)
class Suggestions:
    """Choices for the text between column ``start`` and the cursor on the cursor's line."""

    kind: CompletionKind
    items: tuple[CompletionItem, ...]
    start: int


def command_suggestions(before: str, commands: Sequence[CommandInfo]) -> Suggestions | None:
    """``/na`` → the commands starting with ``na``; ``/name arg`` → the command's argument
    choices.  ``before`` is the first line up to the cursor.
    """
    if not before.startswith("/"):
        return None
    space = before.find(" ")
    if space == -1:
        prefix = before[1:].lower()
        items = tuple(
            CompletionItem(c.name, c.name, c.description)
            for c in commands
            if c.name.lower().startswith(prefix)
        )
        return Suggestions("command", items, 0) if items else None
    name = before[1:space]
    command = next((c for c in commands if c.name == name), None)
    if command is None or command.arguments is None:
        return None
    arg_start = space + 1
    items = tuple(command.arguments(before[arg_start:]))
    return Suggestions("argument", items, arg_start) if items else None


_AT = re.compile(r'(?:^|\s)@("[^"]*|\S*)$')


def at_query(before: str) -> tuple[int, str] | None:
    """The column of the ``@`` and the query after it when the cursor ends an ``@`` reference."""
    found = _AT.search(before)
    if found is None:
        return None
    query = found.group(1)
    return found.start(1) - 1, query.removeprefix('"')


def file_suggestions(before: str, index: FileIndex, limit: int = 50) -> Suggestions | None:
    """``@que`` → the project paths ranked for ``que`` (empty until ``index`` is loaded)."""
    found = at_query(before)
    if found is None:
        return None
    start, query = found
    items = tuple(
        CompletionItem(path, path, "directory" if path.endswith("/") else "")
        for path in index.search(query, limit)
    )
    return Suggestions("file", items, start) if items else None


_WORD_DELIMITERS = " \t\"'="


def path_word_start(before: str) -> int:
    """Where the path-like word ending at the cursor starts (after a space, quote or ``=``)."""
    return max(before.rfind(char) for char in _WORD_DELIMITERS) + 1


def path_suggestions(before: str, cwd: Path) -> Suggestions | None:
    """Tab: the entries of the directory named by the word before the cursor that start with its
    last part.  ``~`` is expanded for listing but kept as typed; directories end with ``/``.
    """
    start = path_word_start(before)
    word = before[start:]
    head, _, partial = word.rpartition("/")
    dir_text = f"{head}/" if word.count("/") else ""
    if word.startswith("~") and "/" not in word:
        return None  # ``~user`` completion is a shell's job
    listed = Path(os.path.expanduser(dir_text or "."))
    directory = listed if listed.is_absolute() else cwd / listed
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return None
    show_hidden = partial.startswith(".")
    dirs: list[CompletionItem] = []
    files: list[CompletionItem] = []
    for entry in entries:
        if not entry.name.startswith(partial) or (entry.name.startswith(".") and not show_hidden):
            continue
        try:
            is_dir = entry.is_dir()  # follows symlinks, as a shell does
        except OSError:
            is_dir = False
        name = entry.name + ("/" if is_dir else "")
        (dirs if is_dir else files).append(CompletionItem(dir_text + name, name))
    items = tuple([*dirs, *files][:_MAX_PATH_ITEMS])
    return Suggestions("path", items, start) if items else None


def completion_insert(kind: CompletionKind, item: CompletionItem) -> str:
    """The text that replaces the completed word: ``/name ``, ``@path `` (quoted when it has
    spaces; no trailing space after a directory, so completion can go on into it), or the value.
    """
    if kind == "command":
        return f"/{item.value} "
    if kind == "file":
        path = f'"{item.value}"' if " " in item.value else item.value
        return f"@{path}" if item.value.endswith("/") else f"@{path} "
    return item.value


class CompletionProvider:
    """Chooses what to complete from the cursor's context.

    :param cwd: the directory Tab paths are relative to
    :param commands: the slash commands (builtin, plugin, prompt templates)
    :param file_index: the project files for ``@`` (one per project, shared)
    """

    def __init__(
        self, cwd: Path, commands: Sequence[CommandInfo] = (), file_index: FileIndex | None = None
    ) -> None:
        self.cwd = cwd
        self.commands: tuple[CommandInfo, ...] = tuple(commands)
        self.file_index = file_index if file_index is not None else FileIndex(cwd)

    def wants_files(self, before: str) -> bool:
        """True when the cursor ends an ``@`` reference (the file index is needed)."""
        return at_query(before) is not None

    def suggest(self, row: int, before: str, *, force: bool) -> Suggestions | None:
        """The choices at the cursor, or None.

        :param row: the cursor's line (``/`` commands only on the first)
        :param before: the cursor's line up to the cursor
        :param force: Tab was pressed: complete a path when nothing else applies
        """
        if row == 0 and before.startswith("/"):
            return command_suggestions(before, self.commands)
        if self.wants_files(before):
            return file_suggestions(before, self.file_index)
        if force:
            return path_suggestions(before, self.cwd)
        return None


class CompletionMenu(Widget):
    """The choices, at most :data:`MENU_ROWS` rows, the selected one highlighted.

    The app mounts it next to the editor and calls :meth:`show` from the editor's
    ``CompletionChanged`` message (or passes it to the editor, which then updates it directly).
    """

    DEFAULT_CSS = """
    CompletionMenu {
        height: auto;
        max-height: 8;
        padding: 0 1;
    }
    CompletionMenu > .completion-menu--selected {
        text-style: reverse;
    }
    CompletionMenu > .completion-menu--description {
        color: $text-muted;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "completion-menu--selected",
        "completion-menu--description",
    }

    def __init__(
        self, *, id: str | None = None, classes: str | None = None, rows: int = MENU_ROWS
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.rows = max(2, rows)
        """How many rows it shows at most (settings ``autocompleteMaxVisible``)."""
        self.styles.max_height = self.rows
        self.items: tuple[CompletionItem, ...] = ()
        self.selected = 0
        self.display = False

    def show(self, items: Sequence[CompletionItem], selected: int) -> None:
        """Show ``items`` with ``selected`` highlighted; no items hides the menu."""
        self.items = tuple(items)
        self.selected = selected
        self.display = bool(self.items)
        self.refresh(layout=True)

    def visible_window(self) -> tuple[int, int]:
        """The slice of items on screen: the selection stays in view, one row is kept for the
        position counter when the items do not fit.
        """
        total = len(self.items)
        rows = self.rows if total <= self.rows else self.rows - 1
        first = min(max(0, self.selected - rows // 2), max(0, total - rows))
        return first, min(total, first + rows)

    def render(self) -> Text:
        first, last = self.visible_window()
        shown = self.items[first:last]
        width = min(32, max((len(item.label) for item in shown), default=0))
        selected_style = self.get_component_rich_style("completion-menu--selected")
        muted = self.get_component_rich_style("completion-menu--description")
        lines: list[Text] = []
        for index, item in enumerate(shown, start=first):
            line = Text(no_wrap=True, overflow="ellipsis")
            marker = "→ " if index == self.selected else "  "
            line.append(marker + item.label.ljust(width))
            if item.description:
                line.append("  " + item.description, style=muted)
            if index == self.selected:
                line.stylize(selected_style)
            lines.append(line)
        if last - first < len(self.items):
            lines.append(Text(f"  ({self.selected + 1}/{len(self.items)})", style=muted))
        return Text("\n").join(lines)
