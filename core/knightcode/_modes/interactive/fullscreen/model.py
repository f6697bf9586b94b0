"""The fullscreen transcript's content and viewport, without Textual (unit-testable, benchable).

A transcript is a list of *entries* (a message, a streamed markdown block, a notice…). An entry
is rendered to lines only when it is about to be seen, and the lines are cached per entry for
one width: a 10,000-message session costs, per page, the entries on that page. The viewport is
therefore not an absolute line number (that would need every entry's height, i.e. rendering
everything) but an *anchor* — an entry and a line inside it — plus ``follow``: glued to the end,
where new output appears.

Search works on the plain text of rendered lines. It renders entries that were never seen (once
per width; later searches are string scans over cached lines).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.segment import Segment

__all__ = ["Entry", "Match", "TranscriptModel"]

Line = list["Segment"]
#: Renders a renderable to lines at a width (``render.ansi.render_segments`` in the app).
LineRenderer = Callable[["RenderableType", int], list[Line]]


@dataclass
class Entry:
    """One piece of the transcript. ``source`` builds the renderable when first needed (a loaded
    session's old messages are never built unless scrolled to); ``prompt`` marks a user message
    (the target of previous/next prompt).
    """

    source: Callable[[], RenderableType | None]
    prompt: bool = False
    _width: int = -1
    _lines: list[Line] = field(default_factory=list)
    _plain: list[str] | None = None

    def lines(self, width: int, render: LineRenderer) -> list[Line]:
        """The entry's lines at ``width``, with the blank line that follows every entry."""
        if width != self._width:
            renderable = self.source()
            body = [] if renderable is None else render(renderable, width)
            self._lines = [*body, []] if body else []
            self._width = width
            self._plain = None
        return self._lines

    def rendered(self, width: int) -> bool:
        return self._width == width and self._plain is not None

    def plain(self, width: int, render: LineRenderer) -> list[str]:
        """The entry's lines as plain text (what search matches against)."""
        lines = self.lines(width, render)
        if self._plain is None:
            self._plain = ["".join(s.text for s in line if not s.control) for line in lines]
        return self._plain


@dataclass(frozen=True)
class Match:
    """A search hit: ``entry``'s ``line``, columns ``start``..``end`` of its plain text."""

    entry: int
    line: int
    start: int
    end: int


class TranscriptModel:
    """Entries, a viewport over them and the search state."""

    def __init__(self, render: LineRenderer) -> None:
        self._render = render
        self.entries: list[Entry] = []
        self.width = 80
        self.height = 20
        self.top = (0, 0)
        """The first visible line: (entry index, line inside it) — meaningless while following."""
        self.follow = True
        self.query = ""
        self.matches: list[Match] = []
        self.current = -1
        self._warm = 0  # entries before this one are rendered at ``width`` (see prerender)

    # --- content ----------------------------------------------------------------------------

    def append(self, entry: Entry) -> None:
        self.entries.append(entry)
        if self.query:
            self._search_entry(len(self.entries) - 1)

    def clear(self) -> None:
        self.entries.clear()
        self._warm = 0
        self.top, self.follow = (0, 0), True
        self.matches, self.current = [], -1

    def resize(self, width: int, height: int) -> None:
        if max(1, width) != self.width:
            self._warm = 0
        self.width, self.height = max(1, width), max(1, height)
        if self.query:
            self.search(self.query, keep=True)

    def prerender(self, count: int) -> bool:
        """Render up to ``count`` entries not yet rendered at this width (the pane calls this
        while idle, so a search rarely has to render anything); True when all are.
        """
        while self._warm < len(self.entries):
            if count <= 0:
                return False
            entry = self.entries[self._warm]
            if not entry.rendered(self.width):
                entry.plain(self.width, self._render)
                count -= 1
            self._warm += 1
        return True

    def _lines(self, index: int) -> list[Line]:
        return self.entries[index].lines(self.width, self._render)

    # --- viewport ---------------------------------------------------------------------------

    def _end_top(self) -> tuple[int, int]:
        """The anchor that shows the last screenful (rendering backwards from the end)."""
        need = self.height
        index = len(self.entries) - 1
        while index >= 0:
            count = len(self._lines(index))
            if count >= need:
                return index, count - need
            need -= count
            index -= 1
        return 0, 0

    def anchor(self) -> tuple[int, int]:
        return self._end_top() if self.follow else self.top

    def visible(self) -> list[tuple[int, int, Line]]:
        """The lines on screen, top down: (entry index, line index, segments)."""
        index, line = self.anchor()
        shown: list[tuple[int, int, Line]] = []
        while index < len(self.entries) and len(shown) < self.height:
            lines = self._lines(index)
            shown += [(index, n, lines[n]) for n in range(line, len(lines))][
                : self.height - len(shown)
            ]
            index, line = index + 1, 0
        return shown

    def scroll(self, delta: int) -> None:
        """Move the view by ``delta`` lines (negative: up). Reaching the end follows again."""
        index, line = self.anchor()
        end = self._end_top()
        if delta < 0:
            need = -delta
            while need > 0:
                if line >= need:
                    line -= need
                    need = 0
                elif index == 0:
                    line = 0
                    need = 0
                else:
                    need -= line
                    index -= 1
                    line = len(self._lines(index))
            self.top, self.follow = (index, line), False
            self._settle()
            return
        need = delta
        while need > 0 and (index, line) < end:
            remaining = len(self._lines(index)) - line
            if remaining > need:
                line += need
                need = 0
            else:
                need -= remaining
                index, line = index + 1, 0
        self.top = (index, line)
        self.follow = self.top >= end
        self._settle()

    def _settle(self) -> None:
        """An anchor at the end of an empty or finished entry moves to the next one's start."""
        index, line = self.top
        while index < len(self.entries) - 1 and line >= len(self._lines(index)):
            index, line = index + 1, 0
        self.top = (index, line)
        if not self.follow and self.top >= self._end_top():
            self.follow = True

    def page(self, pages: float) -> None:
        self.scroll(round(pages * max(1, self.height - 1 if abs(pages) >= 1 else self.height)))

    def to_top(self) -> None:
        self.top, self.follow = (0, 0), False
        self._settle()

    def to_bottom(self) -> None:
        self.follow = True

    def show_entry(self, index: int, line: int = 0, *, context: int = 0) -> None:
        """Put ``index``'s ``line`` at the top (``context`` lines below the top)."""
        self.top, self.follow = (index, line), False
        if context:
            self.scroll(-context)
        else:
            self._settle()

    def previous_prompt(self) -> bool:
        """Jump to the user message above the top of the view; False when there is none."""
        index, line = self.anchor()
        start = index if line == 0 else index + 1
        for candidate in range(min(start, len(self.entries)) - 1, -1, -1):
            if self.entries[candidate].prompt:
                self.show_entry(candidate)
                return True
        return False

    def next_prompt(self) -> bool:
        """Jump to the next user message below the top of the view (near the end: follow);
        False when the view did not move.
        """
        before = self.anchor()
        for candidate in range(before[0] + 1, len(self.entries)):
            if self.entries[candidate].prompt:
                self.show_entry(candidate)
                return self.anchor() != before
        self.to_bottom()
        return False

    # --- search -----------------------------------------------------------------------------

    def search(self, query: str, *, keep: bool = False) -> None:
        """Find ``query`` (case-insensitive) in every rendered line; select the match nearest
        below the top of the view (``keep``: the same match number as before).
        """
        previous = self.current
        self.query = query
        self.matches = []
        self.current = -1
        if not query:
            return
        for index in range(len(self.entries)):
            self._search_entry(index)
        if not self.matches:
            return
        if keep and 0 <= previous < len(self.matches):
            self.current = previous
        else:
            here = self.anchor()
            self.current = next(
                (n for n, m in enumerate(self.matches) if (m.entry, m.line) >= here),
                len(self.matches) - 1,
            )
        self._reveal()

    def _search_entry(self, index: int) -> None:
        needle = self.query.lower()
        for number, text in enumerate(self.entries[index].plain(self.width, self._render)):
            haystack = text.lower()
            start = haystack.find(needle)
            while start >= 0:
                self.matches.append(Match(index, number, start, start + len(needle)))
                start = haystack.find(needle, start + len(needle))

    def step(self, direction: int) -> None:
        """Select the next (1) or previous (-1) match, wrapping around."""
        if not self.matches:
            return
        self.current = (self.current + direction) % len(self.matches)
        self._reveal()

    def close_search(self) -> None:
        self.query, self.matches, self.current = "", [], -1

    def _reveal(self) -> None:
        """Scroll so the selected match is on screen (a third of the way down, when moving)."""
        match = self.matches[self.current]
        if any((e, n) == (match.entry, match.line) for e, n, _ in self.visible()):
            return
        self.show_entry(match.entry, match.line, context=self.height // 3)
