"""``TranscriptPane``: the fullscreen transcript, drawn line by line from :mod:`.model`.

Textual's line API asks for one screen row at a time (``render_line``); the pane answers from
the model's visible lines, so a frame costs the rows on screen whatever the transcript's length.
Search matches on those rows are highlighted (the selected one differently); the mouse wheel
scrolls; dragging selects whole rows of text, copied on release when ``fullscreenCopyOnSelect``
is on (else by ``app.message.copy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from knightcode._modes.interactive.fullscreen.model import Entry, Line, TranscriptModel

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import RenderableType
    from textual.geometry import Region

__all__ = ["TranscriptPane"]

MATCH_STYLE = Style(bgcolor="yellow", color="black")
CURRENT_STYLE = Style(bgcolor="dark_orange", color="black", bold=True)
SELECTION_STYLE = Style(reverse=True)
NEW_OUTPUT_STYLE = Style(reverse=True, bold=True)
WHEEL_LINES = 3
#: Entries are rendered ahead in slices of this much work, one slice per tick, so that a search
#: finds them ready and keys still echo at once meanwhile.
PRERENDER_SLICE = 0.006
PRERENDER_TICK = 0.02


def _render_lines(renderable: RenderableType, width: int) -> list[Line]:
    from knightcode._modes.interactive.render.ansi import render_segments

    return render_segments(renderable, width)


class TranscriptPane(Widget, can_focus=False):
    """The scrolling transcript of fullscreen mode."""

    DEFAULT_CSS = """
    TranscriptPane { height: 1fr; }
    """

    class Selected(Message):
        """The mouse selected ``text`` (sent on release)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class SearchProgress(Message):
        """The prerendering searched more entries (the count and selection may have changed)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = TranscriptModel(_render_lines)
        self._rows: list[tuple[int, int, Line]] = []
        self._selecting: tuple[int, int] | None = None
        self.unseen = False
        """Entries arrived below while the view was scrolled up."""
        self.selection: tuple[tuple[int, int], tuple[int, int]] | None = None
        """The selected rows, first and last, as (entry, line) — inclusive."""

    def on_mount(self) -> None:
        self.set_interval(PRERENDER_TICK, self._prerender)

    def _prerender(self) -> None:
        model = self.model
        if not self.size.width:
            return
        searching = bool(model.query) and not model.search_complete
        count = model.match_count
        # While a search waits for entries, render them faster (keys still echo in between).
        model.prerender(PRERENDER_SLICE * (3 if searching else 1))
        if searching:
            if model.match_count != count or model.search_complete:
                self.post_message(self.SearchProgress())
            self.refresh()

    # --- content ----------------------------------------------------------------------------

    def append(self, source: Callable[[], RenderableType | None], *, prompt: bool = False) -> None:
        self.model.append(Entry(source, prompt))
        if not self.model.follow and not self.unseen:
            self.unseen = True  # scrolled up: the last row says there is more below
        self.refresh()

    def clear(self) -> None:
        self.model.clear()
        self.selection = None
        self.refresh()

    def changed(self) -> None:
        """The viewport or the search moved: draw again."""
        self.refresh()

    # --- drawing ----------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self.model.resize(event.size.width, event.size.height)
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        self._rows = self.model.visible()  # once per frame, not once per row
        if self.model.follow:
            self.unseen = False
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self.unseen and y == self.size.height - 1:
            hint = Text(" ↓ new output below ", style=NEW_OUTPUT_STYLE)
            return Strip(list(hint.render(self.app.console))).extend_cell_length(width)
        if y >= len(self._rows):
            return Strip.blank(width)
        entry, line, segments = self._rows[y]
        styles = self._highlights(entry, line)
        if styles:
            text = Text()
            for segment in segments:
                if not segment.control:
                    text.append(segment.text, segment.style)
            for start, end, style in styles:
                text.stylize(style, start, end)
            segments = list(text.render(self.app.console))
            segments = [s for s in segments if s.text != "\n"]
        return Strip(segments).extend_cell_length(width).crop(0, width)

    def _highlights(self, entry: int, line: int) -> list[tuple[int, int, Style]]:
        found: list[tuple[int, int, Style]] = []
        if self.selection is not None and self.selection[0] <= (entry, line) <= self.selection[1]:
            found.append((0, 10_000, SELECTION_STYLE))
        model = self.model
        if model.query:
            selected = model.selected
            for match in model.entry_matches(entry):
                if match.line == line:
                    style = CURRENT_STYLE if match == selected else MATCH_STYLE
                    found.append((match.start, match.end, style))
        return found

    # --- mouse ------------------------------------------------------------------------------

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.model.scroll(-WHEEL_LINES)
        self.refresh()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.model.scroll(WHEEL_LINES)
        self.refresh()

    def _row_at(self, y: int) -> tuple[int, int] | None:
        if not self._rows:
            return None
        entry, line, _ = self._rows[max(0, min(y, len(self._rows) - 1))]
        return entry, line

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self._selecting = self._row_at(event.y)
        self.selection = None
        if self._selecting is not None:
            self.capture_mouse()
        self.refresh()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._selecting is None:
            return
        here = self._row_at(event.y)
        if here is not None:
            self.selection = (min(self._selecting, here), max(self._selecting, here))
            self.refresh()

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._selecting is None:
            return
        self._selecting = None
        self.release_mouse()
        text = self.selected_text()
        if text:
            self.post_message(self.Selected(text))

    def selected_text(self) -> str:
        """The selected rows as plain text (trailing blanks cut), or "" without a selection."""
        if self.selection is None:
            return ""
        (first_entry, first_line), (last_entry, last_line) = self.selection
        model = self.model
        rows: list[str] = []
        for index in range(first_entry, last_entry + 1):
            plain = model.entries[index].plain(model.width, _render_lines)
            start = first_line if index == first_entry else 0
            end = last_line + 1 if index == last_entry else len(plain)
            rows += [row.rstrip() for row in plain[start:end]]
        return "\n".join(rows).strip("\n")
