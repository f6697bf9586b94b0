"""``/resume``: pick a session to continue; resolves its path.

As the reference's session selector: sessions load in the background (a ``loader``), the list
is threaded (forks under their parent) until a search or another sort is chosen; sort cycles
threaded → recent → relevance; a search is fuzzy tokens, ``"exact phrase"`` or ``re:regex``
over id, name, every message text and cwd. Every ``app.session.*`` action of the sessionPicker
context: path display, sort, named-only filter, rename (inline field, ``rename`` callback),
delete (confirmed in place, ``delete`` callback; never the current session), and the
non-invasive delete key that deletes only while the search is empty.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from rich.text import Text
from textual import events
from textual.widget import Widget

from knightcode._keys.actions import SELECT, SESSION_PICKER
from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.dialogs.base import (
    ACCENT,
    DIM,
    ERROR,
    MUTED,
    WARNING,
    KeyedInput,
    ListDialog,
)
from knightcode._modes.interactive.dialogs.fuzzy import fuzzy_score
from knightcode._session.listing import SessionInfo, list_sessions

__all__ = [
    "Loader",
    "SessionItem",
    "SessionPicker",
    "SortMode",
    "directory_loader",
    "format_age",
    "search_sessions",
    "session_items",
]

SortMode = Literal["threaded", "recent", "relevance"]
_SORTS: tuple[SortMode, ...] = ("threaded", "recent", "relevance")


@dataclass(frozen=True)
class SessionItem:
    """One session as listed.

    :param parent_path: the session it was forked from (for the threaded view)
    :param text: every message text, for the search
    """

    path: Path
    id: str
    name: str | None
    first_message: str
    modified: datetime
    message_count: int
    cwd: str
    parent_path: str | None = None
    text: str = ""


Loader = Callable[[], Awaitable[Sequence[SessionItem]]]
"""Lists the sessions (newest first); called on open and after a rename or delete."""


def session_items(infos: Iterable[SessionInfo]) -> list[SessionItem]:
    """The listing of ``-c``/``--resume`` (:func:`knightcode._session.listing.list_sessions`)
    as picker items.
    """
    return [
        SessionItem(
            path=info.path,
            id=info.id,
            name=info.name or None,
            first_message=info.first_message,
            modified=info.modified,
            message_count=info.message_count,
            cwd=info.cwd,
            parent_path=info.parent_session_path,
            text=info.all_messages_text,
        )
        for info in infos
    ]


def directory_loader(session_dir: Path) -> Loader:
    """A loader listing ``session_dir`` in a thread (reading many files must not block the
    UI).
    """

    async def load() -> Sequence[SessionItem]:
        return session_items(await asyncio.to_thread(list_sessions, session_dir))

    return load


def format_age(when: datetime, now: datetime | None = None) -> str:
    """``now``, ``5m``, ``3h``, ``2d``, ``1w``, ``4mo``, ``1y``, as the reference."""
    now = now or datetime.now(UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    minutes = int((now - when).total_seconds() // 60)
    hours, days = minutes // 60, minutes // 1440
    if minutes < 1:
        return "now"
    if minutes < 60:
        return f"{minutes}m"
    if hours < 24:
        return f"{hours}h"
    if days < 7:
        return f"{days}d"
    if days < 30:
        return f"{days // 7}w"
    if days < 365:
        return f"{days // 30}mo"
    return f"{days // 365}y"


def _shorten(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home != "~" and path.startswith(home) else path


def _search_text(item: SessionItem) -> str:
    return f"{item.id} {item.name or ''} {item.text} {item.cwd}"


def _match(item: SessionItem, query: str) -> float | None:
    """The score of ``item`` for a non-blank query (lower is better), None for no match."""
    text = _search_text(item)
    query = query.strip()
    if query.startswith("re:"):
        try:
            found = re.search(query[3:].strip() or "(?!)", text, re.IGNORECASE)
        except re.error:
            return None
        return None if found is None else found.start() * 0.1
    tokens: list[tuple[bool, str]] = []  # (is a phrase, text)
    if query.count('"') % 2 == 0:
        for index, part in enumerate(query.split('"')):
            if index % 2:
                tokens.append((True, part))
            else:
                tokens.extend((False, word) for word in part.split())
    else:  # unbalanced quotes: plain words, as the reference
        tokens = [(False, word) for word in query.split()]
    flat = " ".join(text.lower().split())
    total = 0.0
    for phrase, token in tokens:
        if phrase:
            wanted = " ".join(token.lower().split())
            if not wanted:
                continue
            index = flat.find(wanted)
            if index < 0:
                return None
            total += index * 0.1
        else:
            score = fuzzy_score(token, text)
            if score is None:
                return None
            total += score
    return total


def search_sessions(items: Sequence[SessionItem], query: str, sort: SortMode) -> list[SessionItem]:
    """The sessions matching ``query``: in the given (recency) order for "recent", best match
    first (newest on ties) otherwise.
    """
    scored = [(score, item) for item in items if (score := _match(item, query)) is not None]
    if sort == "recent":
        return [item for _, item in scored]
    scored.sort(key=lambda row: (row[0], -row[1].modified.timestamp()))
    return [item for _, item in scored]


def _threaded(items: Sequence[SessionItem]) -> list[tuple[SessionItem, str]]:
    """Forks under their parents (newest first at each level), with the tree-drawing prefix."""
    paths = {str(item.path) for item in items}
    children: dict[str, list[SessionItem]] = {}
    roots: list[SessionItem] = []
    for item in items:
        parent = item.parent_path
        if parent and parent in paths and parent != str(item.path):
            children.setdefault(parent, []).append(item)
        else:
            roots.append(item)

    def newest(group: list[SessionItem]) -> list[SessionItem]:
        return sorted(group, key=lambda i: i.modified, reverse=True)

    result: list[tuple[SessionItem, str]] = []
    seen: set[str] = set()
    # (item, depth, ancestors' "continues" flags, is last) — a loop, not recursion.
    stack: list[tuple[SessionItem, int, tuple[bool, ...], bool]] = []
    ordered_roots = newest(roots)
    for index in range(len(ordered_roots) - 1, -1, -1):
        stack.append((ordered_roots[index], 0, (), index == len(ordered_roots) - 1))
    while stack:
        item, depth, continues, last = stack.pop()
        key = str(item.path)
        if key in seen:
            continue
        seen.add(key)
        prefix = ""
        if depth:
            prefix = "".join("│  " if c else "   " for c in continues)
            prefix += "└─ " if last else "├─ "
        result.append((item, prefix))
        kids = newest(children.get(key, []))
        below = (*continues, not last) if depth else continues
        for index in range(len(kids) - 1, -1, -1):
            stack.append((kids[index], depth + 1, below, index == len(kids) - 1))
    return result


class SessionPicker(ListDialog[SessionItem, Path]):
    """See the module docstring.

    :param loader: lists the sessions (:func:`directory_loader`)
    :param rename: renames a session (path, new name); no rename action without it
    :param delete: deletes a session file; no delete action without it
    :param current: the session in use (marked; cannot be deleted)
    :param show_cwd: show each session's directory (a listing across projects)
    """

    contexts = (SESSION_PICKER, SELECT)
    extra_actions = ("tui.input.submit",)
    wrap = False
    empty_text = "  No sessions found"

    def __init__(
        self,
        loader: Loader,
        *,
        rename: Callable[[Path, str], Awaitable[None]] | None = None,
        delete: Callable[[Path], Awaitable[None]] | None = None,
        current: Path | None = None,
        show_cwd: bool = False,
        keys: KeyRegistry | None = None,
    ) -> None:
        self.sort: SortMode = "threaded"
        self.named_only = False
        self.show_path = False
        self.show_cwd = show_cwd
        self.confirming_delete: SessionItem | None = None
        self.renaming: SessionItem | None = None
        self.status: tuple[str, str] | None = None  # (style, message)
        self.fetching = True
        self._prefixes: dict[Path, str] = {}
        self._loader = loader
        self._rename = rename
        self._delete = delete
        self._current = current
        self.loaded = asyncio.Event()
        super().__init__("Resume session", [], keys=keys)
        self.rename_field = KeyedInput(self, placeholder="New name", id="rename")
        self.rename_field.display = False

    # --- loading ----------------------------------------------------------------------------

    def on_mount(self) -> None:
        """Start loading (Textual calls Dialog.on_mount too: handlers run along the MRO)."""
        self.run_worker(self.reload(), exclusive=True)

    async def reload(self) -> None:
        """(Re)load the sessions, keeping the selection where possible."""
        self.fetching = True
        self.loaded.clear()
        try:
            self.items = list(await self._loader())
        except Exception as exc:  # a listing error is shown, not raised
            self.status = (ERROR, f"Failed to load sessions: {exc}")
        finally:
            self.fetching = False
            self.loaded.set()
        self.refilter()

    # --- filtering --------------------------------------------------------------------------

    def filter_items(self, items: Sequence[SessionItem], query: str) -> list[SessionItem]:
        """Named filter, then the tree (no search, threaded) or the search in the sort mode."""
        pool = [i for i in items if i.name and i.name.strip()] if self.named_only else list(items)
        self._prefixes = {}
        if not query.strip():
            if self.sort == "threaded":
                rows = _threaded(pool)
                self._prefixes = {item.path: prefix for item, prefix in rows if prefix}
                return [item for item, _ in rows]
            return sorted(pool, key=lambda i: i.modified, reverse=True)
        return search_sessions(pool, query, self.sort)

    # --- rendering --------------------------------------------------------------------------

    def compose_fields(self) -> Iterable[Widget]:
        """Search, and the rename field (hidden)."""
        yield from super().compose_fields()
        yield self.rename_field

    def render_item(self, item: SessionItem, selected: bool) -> Text:
        """Tree prefix, name or first message, then path/cwd, message count and age."""
        row = Text(self._prefixes.get(item.path, ""), style=DIM)
        label = " ".join((item.name or item.first_message).split())
        if item is self.confirming_delete:
            style = ERROR
        elif self._current is not None and item.path == self._current:
            style = ACCENT
        elif item.name:
            style = WARNING
        else:
            style = ""
        row.append(label[:80], style=style + (" bold" if selected else ""))
        right = f"{item.message_count} {format_age(item.modified)}"
        if self.show_cwd and item.cwd:
            right = f"{_shorten(item.cwd)} {right}"
        if self.show_path:
            right = f"{_shorten(str(item.path))} {right}"
        row.append(f"  {right}", style=ERROR if item is self.confirming_delete else MUTED)
        return row

    def render_body(self) -> Text:
        """State line, then the list (or the rename prompt)."""
        if self.renaming is not None:
            return Text("  Rename session (enter save · esc cancel)", style=MUTED)
        head = Text(
            f"  Sort: {self.sort.capitalize()} · Name: {'Named' if self.named_only else 'All'}",
            style=MUTED,
        )
        if self.fetching:
            head.append(" · Loading…", style=ACCENT)
        lines = [head]
        if self.confirming_delete is not None:
            lines.append(Text("  Delete session? enter confirm · esc cancel", style=ERROR))
        elif self.status is not None:
            lines.append(Text("  " + self.status[1], style=self.status[0]))
        if self.named_only and not self.shown and not self.fetching:
            key = (self.keys.keys_for("app.session.toggleNamedFilter") or ("(unbound)",))[0]
            lines.append(Text(f"  No named sessions. Press {key} to show all.", style=MUTED))
        else:
            lines.extend(self.render_rows())
        return Text("\n").join(lines)

    def hint_text(self) -> str:
        """The keys, as bound."""

        def key(action: str) -> str:
            return (self.keys.keys_for(action) or ("(unbound)",))[0]

        parts = [
            f"{key('app.session.toggleSort')} sort",
            f"{key('app.session.toggleNamedFilter')} named",
            f"{key('app.session.togglePath')} path ({'on' if self.show_path else 'off'})",
        ]
        if self._delete is not None:
            parts.append(f"{key('app.session.delete')} delete")
        if self._rename is not None:
            parts.append(f"{key('app.session.rename')} rename")
        return " · ".join(parts) + ' · re:<pattern> regex · "phrase" exact'

    # --- actions ----------------------------------------------------------------------------

    async def perform(self, action: str) -> bool:
        """Every app.session.* action of the context; the delete and rename sub-states."""
        if self.confirming_delete is not None:
            return await self._perform_confirming(action)
        if self.renaming is not None:
            return await self._perform_renaming(action)
        if action != "tui.select.cancel":
            self.status = None
        if action == "tui.input.submit":
            return False  # enter is tui.select.confirm on the list
        if action == "app.session.togglePath":
            self.show_path = not self.show_path
        elif action == "app.session.toggleSort":
            self.sort = _SORTS[(_SORTS.index(self.sort) + 1) % len(_SORTS)]
            self.refilter()
        elif action == "app.session.toggleNamedFilter":
            self.named_only = not self.named_only
            self.refilter()
        elif action == "app.session.rename":
            self._start_rename()
        elif action == "app.session.delete":
            self._start_delete()
        elif action == "app.session.deleteNoninvasive":
            if self.query_text:
                return False  # the search field deletes a word
            self._start_delete()
        else:
            return await super().perform(action)
        return True

    async def perform_key(self, event: events.Key) -> bool:
        """While a delete waits for confirmation, every other key is ignored."""
        return self.confirming_delete is not None

    def _start_delete(self) -> None:
        item = self.current
        if item is None or self._delete is None:
            return
        if self._current is not None and item.path == self._current:
            self.status = (ERROR, "Cannot delete the currently active session")
            return
        self.confirming_delete = item

    async def _perform_confirming(self, action: str) -> bool:
        item = self.confirming_delete
        if action == "tui.select.confirm" and item is not None and self._delete is not None:
            self.confirming_delete = None
            try:
                await self._delete(item.path)
            except Exception as exc:  # shown in the picker
                self.status = (ERROR, f"Failed to delete: {exc}")
            else:
                self.status = (ACCENT, "Session deleted")
                self.items = [i for i in self.items if i.path != item.path]
                self.refilter()
                await self.reload()
        elif action == "tui.select.cancel":
            self.confirming_delete = None
        return True

    def _start_rename(self) -> None:
        item = self.current
        if item is None or self._rename is None or self.fetching:
            return
        self.renaming = item
        self.rename_field.value = item.name or ""
        self.rename_field.display = True
        if self.search is not None:
            self.search.display = False
        self.rename_field.focus()

    def _end_rename(self) -> None:
        self.renaming = None
        self.rename_field.display = False
        if self.search is not None:
            self.search.display = True
            self.search.focus()

    async def _perform_renaming(self, action: str) -> bool:
        item = self.renaming
        if action in ("tui.select.confirm", "tui.input.submit"):
            name = self.rename_field.value.strip()
            if not name or item is None or self._rename is None:
                return True  # an empty name is not saved; the field stays open
            try:
                await self._rename(item.path, name)
            except Exception as exc:  # shown in the picker
                self.status = (ERROR, f"Failed to rename: {exc}")
            self._end_rename()
            await self.reload()
            return True
        if action == "tui.select.cancel":
            self._end_rename()
            return True
        return False  # the field edits

    async def confirm(self, item: SessionItem) -> None:
        """Resume ``item``."""
        self.resolve(item.path)
