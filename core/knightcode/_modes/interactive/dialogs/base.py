"""What every selector and dialog shares: a result future, registry-driven keys, a list window.

A dialog is a widget mounted in place of the editor (as the reference swaps its editor
container): small (``height: auto``, a list shows at most ~10 rows), and it *resolves a result*
instead of calling back: :attr:`Dialog.result` is resolved with the chosen value on confirm and
with ``None`` on cancel (``tui.select.cancel``), on timeout with the dialog's timeout result, and
with ``None`` when the dialog is removed unanswered. :func:`ask` mounts, focuses, awaits, removes.

Keys never go through Textual ``BINDINGS``: a key event becomes our key ids
(:func:`~knightcode._keys.textual_keys.key_ids`), the registry names the action in the dialog's
contexts (``keybindings.json`` rebinding included), and the dialog performs it. Text fields
inside a dialog (:class:`KeyedInput`, :class:`KeyedTextArea`) ask their dialog first, so a
bound key is an action even where the field would otherwise insert or move.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar, Generic, Literal, Protocol, TypeVar

from rich.console import RenderableType
from rich.style import Style
from rich.text import Span, Text
from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Input, Static, TextArea

from knightcode._keys.actions import SELECT
from knightcode._keys.registry import KeyRegistry
from knightcode._keys.textual_keys import key_ids
from knightcode._modes.interactive.dialogs.fuzzy import fuzzy_filter

__all__ = [
    "ACCENT",
    "DIM",
    "ERROR",
    "MUTED",
    "SUCCESS",
    "WARNING",
    "Dialog",
    "KeyOwner",
    "KeyedInput",
    "KeyedTextArea",
    "ListDialog",
    "ask",
    "restyle",
    "scroll_info",
    "visible_window",
]

T = TypeVar("T")
I = TypeVar("I")  # noqa: E741 - the item type of a list, as in the reference's SelectList<I>

ACCENT = "bold cyan"
MUTED = "grey62"
DIM = "dim"
SUCCESS = "green"
WARNING = "yellow"
ERROR = "red"

MAX_VISIBLE = 10
"""Rows a list shows at once: the dialog must stay small in the inline region."""


def restyle(renderable: RenderableType, styles: Mapping[str, Style]) -> RenderableType:
    """``renderable`` (when it is a ``Text``) with each style named in ``styles`` replaced: the
    dialogs write the constants above, the theme gives their colours.
    """
    if not styles or not isinstance(renderable, Text):
        return renderable

    def swap(style: str | Style) -> str | Style:
        return styles.get(style, style) if isinstance(style, str) else style

    text = renderable.copy()
    text.style = swap(text.style)
    text.spans = [Span(span.start, span.end, swap(span.style)) for span in text.spans]
    return text


def visible_window(selected: int, count: int, size: int = MAX_VISIBLE) -> range:
    """The indexes shown: ``size`` rows around ``selected`` (centred while possible), as the
    reference's lists scroll.
    """
    start = max(0, min(selected - size // 2, count - size))
    return range(start, min(start + size, count))


def scroll_info(selected: int, count: int, size: int = MAX_VISIBLE) -> str | None:
    """The ``(3/42)`` position line, shown only when the list does not fit."""
    shown = visible_window(selected, count, size)
    if shown.start > 0 or shown.stop < count:
        return f"  ({selected + 1}/{count})"
    return None


class KeyOwner(Protocol):
    """The dialog a text field asks before handling a key itself."""

    async def handle_key_event(self, event: events.Key) -> bool:
        """Perform the key's action and stop the event; False when the key is not the
        dialog's.
        """
        ...


class KeyedInput(Input):
    """A one-line field whose keys go to its dialog first (a bound key never types)."""

    def __init__(
        self,
        owner: KeyOwner,
        *,
        value: str = "",
        placeholder: str = "",
        password: bool = False,
        id: str | None = None,
    ) -> None:
        super().__init__(value=value, placeholder=placeholder, password=password, id=id)
        self._owner = owner

    async def _on_key(self, event: events.Key) -> None:
        # Textual calls the ``_on_key`` of every class of the MRO, this one first, until one
        # prevents the default: a key the dialog takes never reaches Input's handler (which
        # types it) nor, being stopped, the app's check of Input's BINDINGS.
        await self._owner.handle_key_event(event)


class KeyedTextArea(TextArea):
    """A multi-line field whose keys go to its dialog first (submit and newline are actions)."""

    def __init__(self, owner: KeyOwner, *, text: str = "", id: str | None = None) -> None:
        super().__init__(text, id=id, soft_wrap=True, show_line_numbers=False)
        self._owner = owner

    async def _on_key(self, event: events.Key) -> None:
        # As in KeyedInput: TextArea's own handler runs next unless the dialog took the key.
        await self._owner.handle_key_event(event)


class Dialog(Widget, Generic[T]):
    """A widget that resolves a result; see the module docstring.

    :param title: the first line
    :param keys: the key registry (None: the spec's defaults only)
    :param timeout: seconds after which the dialog resolves to ``timeout_result``; a countdown
        is shown in the title
    :param timeout_result: the result on timeout (a plugin dialog's default)
    """

    DEFAULT_CSS = """
    Dialog {
        height: auto;
        max-height: 24;
        border-top: solid $accent;
        border-bottom: solid $accent;
        padding: 0 1;
    }
    Dialog > Static { height: auto; }
    Dialog > Input, Dialog > Input:focus { border: none; height: 1; padding: 0; }
    Dialog > TextArea, Dialog > TextArea:focus {
        border: none; height: auto; max-height: 10; padding: 0;
    }
    """

    can_focus = True

    contexts: ClassVar[tuple[str, ...]] = (SELECT,)
    """The key contexts listened for, the specific one first."""
    extra_actions: ClassVar[tuple[str, ...]] = ()
    """Actions of other contexts whose keys this dialog reacts to (e.g. ``tui.input.submit``)."""

    def __init__(
        self,
        title: str,
        *,
        keys: KeyRegistry | None = None,
        timeout: float | None = None,
        timeout_result: T | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.title_text = title
        self.keys = keys if keys is not None else KeyRegistry(None)
        self._future: asyncio.Future[T | None] | None = None
        self._timeout = timeout if timeout is not None and timeout > 0 else None
        self._timeout_result = timeout_result
        self._deadline: float | None = None
        self._title = Static("", id="dialog-title")
        self._body = Static("", id="dialog-body")
        self._hint = Static("", id="dialog-hint")

    # --- the result -------------------------------------------------------------------------

    @property
    def result(self) -> asyncio.Future[T | None]:
        """Resolved on confirm; ``None`` on cancel (awaitable)."""
        if self._future is None:
            self._future = asyncio.get_running_loop().create_future()
        return self._future

    @property
    def done(self) -> bool:
        """Whether the result is settled."""
        return self._future is not None and self._future.done()

    def resolve(self, value: T | None) -> None:
        """Settle the result (later calls are ignored: the first answer wins)."""
        if not self.result.done():
            self.result.set_result(value)

    def cancel(self) -> None:
        """Settle the result as cancelled (``None``)."""
        self.resolve(None)

    # --- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Title, the dialog's fields, body, hint."""
        yield self._title
        yield from self.compose_fields()
        yield self._body
        yield self._hint

    def compose_fields(self) -> Iterable[Widget]:
        """Text fields between the title and the body (none by default)."""
        return ()

    def focus_target(self) -> Widget:
        """The widget that takes the focus when the dialog opens."""
        return self

    def render_body(self) -> RenderableType:
        """The main content (a list, a message)."""
        return ""

    def hint_text(self) -> str:
        """The key hint line under the body."""
        return ""

    def theme_styles(self) -> dict[str, Style]:
        """The app theme's colours for this module's style constants (none outside the app:
        the constants' own colours then).
        """
        from knightcode._modes.interactive.app import KnightcodeApp

        if not isinstance(self.app, KnightcodeApp):
            return {}
        theme = self.app.theme_state.current
        return {
            ACCENT: theme.accent + Style(bold=True),
            MUTED: theme.muted,
            DIM: theme.dim,
            SUCCESS: theme.success,
            WARNING: theme.warning,
            ERROR: theme.error,
        }

    def refresh_view(self) -> None:
        """Re-render title, body and hint from the dialog's state (in the theme's colours)."""
        title = Text(self.title_text, style="bold")
        remaining = self.seconds_left
        if remaining is not None:
            title.append(f" ({remaining}s)", style=WARNING)
        styles = self.theme_styles()
        self._title.update(restyle(title, styles))
        self._body.update(restyle(self.render_body(), styles))
        hint = self.hint_text()
        self._hint.update(restyle(Text(hint, style=DIM), styles))
        self._hint.display = bool(hint)

    def on_mount(self) -> None:
        """Render and start the countdown, if any."""
        _ = self.result  # created in the app's loop, before anything can answer
        if self._timeout is not None:
            self._deadline = asyncio.get_running_loop().time() + self._timeout
            self.set_interval(1.0, self.refresh_view)
            self.set_timer(self._timeout, self._expire)
        self.refresh_view()

    def on_unmount(self) -> None:
        """A dialog removed unanswered resolves as cancelled."""
        if self._future is not None and not self._future.done():
            self._future.set_result(None)

    @property
    def seconds_left(self) -> int | None:
        """Whole seconds until the timeout (None without one)."""
        if self._deadline is None:
            return None
        left = self._deadline - asyncio.get_running_loop().time()
        return max(0, math.ceil(left))

    def _expire(self) -> None:
        self.resolve(self._timeout_result)

    # --- keys -------------------------------------------------------------------------------

    def actions_for_event(self, event: events.Key) -> list[str]:
        """The actions the key triggers in this dialog, most specific context first."""
        found: dict[str, None] = {}
        for key in key_ids(event):
            for context in self.contexts:
                for action in self.keys.actions_for(key, context):
                    found.setdefault(action)
            for action in self.extra_actions:
                if key in self.keys.keys_for(action):
                    found.setdefault(action)
        return list(found)

    async def handle_key_event(self, event: events.Key) -> bool:
        """Perform the first action of the key this dialog takes, else its plain-key handling;
        a handled event is stopped and its default prevented.
        """
        handled = False
        for action in self.actions_for_event(event):
            if await self.perform(action):
                handled = True
                break
        if not handled:
            handled = await self.perform_key(event)
        if handled:
            event.stop()
            event.prevent_default()
            if not self.done:
                self.refresh_view()
        return handled

    async def perform(self, action: str) -> bool:
        """Do ``action``; False when this dialog has nothing to do for it (the key then goes on
        to the focused field or the app).
        """
        if action == "tui.select.cancel":
            self.cancel()
            return True
        return False

    async def perform_key(self, event: events.Key) -> bool:
        """Handle a key no action claimed (letters of a search, ``y``/``n``); False to pass."""
        return False

    async def on_key(self, event: events.Key) -> None:
        """Keys reaching the dialog itself (focused, or bubbling from a field that passed)."""
        await self.handle_key_event(event)


SearchMode = Literal["input", "buffer", "none"]


class ListDialog(Dialog[T], Generic[I, T]):
    """A dialog choosing among items: filtering search, scrolling window, ``(3/42)``.

    ``search_mode`` "input" puts an editable :class:`KeyedInput` above the list (left/right move
    its cursor, and page the list only while it is empty); "buffer" keeps a plain typed query
    (the tree's: left/right always page); "none" has no search.
    """

    DEFAULT_CSS = """
    /* A list row is one screen line: a wrapped row would read as two entries. */
    ListDialog > #dialog-body { text-wrap: nowrap; text-overflow: ellipsis; }
    """

    search_mode: ClassVar[SearchMode] = "input"
    wrap: ClassVar[bool] = True
    """Whether up at the top goes to the bottom (and down at the bottom to the top)."""
    max_visible: ClassVar[int] = MAX_VISIBLE
    empty_text: ClassVar[str] = "  No matches"

    def __init__(
        self,
        title: str,
        items: Sequence[I],
        *,
        keys: KeyRegistry | None = None,
        timeout: float | None = None,
        timeout_result: T | None = None,
        placeholder: str = "Type to search…",
        query: str = "",
        id: str | None = None,
    ) -> None:
        super().__init__(title, keys=keys, timeout=timeout, timeout_result=timeout_result, id=id)
        self.items: list[I] = list(items)
        self.shown: list[I] = []
        self._filtered_for: str | None = None  # the search text `shown` was filtered by
        self.selected = 0
        self._buffer = query
        self.search = (
            KeyedInput(self, value=query, placeholder=placeholder, id="dialog-search")
            if self.search_mode == "input"
            else None
        )
        self.refilter()

    def compose_fields(self) -> Iterable[Widget]:
        """The search field, if any."""
        return () if self.search is None else (self.search,)

    def focus_target(self) -> Widget:
        """The search field when there is one."""
        return self if self.search is None else self.search

    # --- filtering --------------------------------------------------------------------------

    @property
    def query_text(self) -> str:
        """The search text."""
        return self.search.value if self.search is not None else self._buffer

    def set_query(self, query: str) -> None:
        """Replace the search text and filter again."""
        if self.search is not None:
            self.search.value = query  # Input.Changed refilters
        self._buffer = query
        self.refilter()

    def search_text(self, item: I) -> str:
        """The text the search matches for ``item``."""
        return str(item)

    def filter_items(self, items: Sequence[I], query: str) -> list[I]:
        """The items shown for ``query``, in display order (fuzzy, best first, by default)."""
        return fuzzy_filter(items, query, self.search_text)

    def refilter(self, keep: I | None = None) -> None:
        """Filter again, keeping ``keep`` (or the current item) selected when still shown."""
        keep = keep if keep is not None else self.current
        self.shown = self.filter_items(self.items, self.query_text)
        self._filtered_for = self.query_text
        if keep is not None and keep in self.shown:
            self.selected = self.shown.index(keep)
        else:
            self.selected = min(self.selected, max(0, len(self.shown) - 1))
        if self.is_mounted:
            self.refresh_view()

    async def on_input_changed(self, event: Input.Changed) -> None:
        """The search changed: filter again, from the top as the reference does."""
        if event.input is self.search:
            event.stop()
            if self._filtered_for == self.query_text:
                return  # filtered already (Enter came first)
            self.shown = self.filter_items(self.items, self.query_text)
            self.selected = 0
            self._filtered_for = self.query_text
            self.refresh_view()

    @property
    def current(self) -> I | None:
        """The selected item, if any is shown."""
        if 0 <= self.selected < len(self.shown):
            return self.shown[self.selected]
        return None

    # --- rendering --------------------------------------------------------------------------

    def render_item(self, item: I, selected: bool) -> Text:
        """One row (without the cursor prefix)."""
        return Text(str(item), style=ACCENT if selected else "")

    def render_rows(self) -> list[Text]:
        """The visible rows with their cursor prefix, and the position line (each cut to one
        screen line by the CSS of ``ListDialog``).
        """
        if not self.shown:
            return [Text(self.empty_text, style=MUTED)]
        rows: list[Text] = []
        for index in visible_window(self.selected, len(self.shown), self.max_visible):
            selected = index == self.selected
            row = Text("→ " if selected else "  ", style=ACCENT if selected else "")
            row.append_text(self.render_item(self.shown[index], selected))
            row.no_wrap = True
            row.overflow = "ellipsis"
            rows.append(row)
        info = scroll_info(self.selected, len(self.shown), self.max_visible)
        if info is not None:
            rows.append(Text(info, style=MUTED))
        return rows

    def render_body(self) -> RenderableType:
        """The list."""
        rows = self.render_rows()
        if self.search_mode == "buffer":
            line = Text("  Search: ", style=MUTED)
            line.append(self._buffer, style=ACCENT)
            rows.insert(0, line)
        return Text("\n").join(rows)

    # --- actions ----------------------------------------------------------------------------

    def move(self, delta: int, *, wrap: bool) -> None:
        """Move the selection by ``delta`` rows (wrapping at the ends when ``wrap``)."""
        count = len(self.shown)
        if count == 0:
            return
        target = self.selected + delta
        if wrap and abs(delta) == 1:
            self.selected = target % count
        else:
            self.selected = max(0, min(count - 1, target))

    def pages_with_arrows(self) -> bool:
        """Whether left/right page the list now (not while they move a search cursor)."""
        return self.search is None or not self.query_text

    async def perform(self, action: str) -> bool:
        """The select actions every list shares; subclasses add their context's."""
        page = self.max_visible
        if action == "tui.select.up":
            self.move(-1, wrap=self.wrap)
        elif action == "tui.select.down":
            self.move(1, wrap=self.wrap)
        elif action == "tui.select.pageUp":
            self.move(-page, wrap=False)
        elif action == "tui.select.pageDown":
            self.move(page, wrap=False)
        elif action in ("tui.select.left", "tui.select.right"):
            if not self.pages_with_arrows():
                return False
            self.move(-page if action == "tui.select.left" else page, wrap=False)
        elif action == "tui.select.confirm":
            if self._filtered_for != self.query_text:
                # Typed quickly, then Enter: the search field's change has not been handled
                # yet (it comes as a message); filter now, so Enter takes what was searched.
                self.shown = self.filter_items(self.items, self.query_text)
                self.selected = 0
                self._filtered_for = self.query_text
                self.refresh_view()
            item = self.current
            if item is not None:
                await self.confirm(item)
        else:
            return await super().perform(action)
        return True

    async def confirm(self, item: I) -> None:
        """Confirm ``item`` (resolve, or step into a sub-state)."""
        raise NotImplementedError

    async def perform_key(self, event: events.Key) -> bool:
        """In "buffer" mode, printable characters and backspace edit the query."""
        if self.search_mode != "buffer":
            return False
        if event.is_printable and event.character:
            self.set_query(self._buffer + event.character)
            return True
        if event.key == "backspace" and self._buffer:
            self.set_query(self._buffer[:-1])
            return True
        return False


async def ask(container: Widget, dialog: Dialog[T]) -> T | None:
    """Mount ``dialog`` into ``container``, focus it, wait for its result, remove it.

    Cancelling the caller removes the dialog too; its result is then ``None``.
    """
    result = dialog.result
    await container.mount(dialog)
    dialog.focus_target().focus()
    try:
        return await result
    finally:
        if dialog.is_attached:
            await dialog.remove()
