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

import bisect
import time
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
    _folded: str = ""

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
        return self._width == width

    def plain(self, width: int, render: LineRenderer) -> list[str]:
        """The entry's lines as plain text (what search matches against)."""
        lines = self.lines(width, render)
        if self._plain is None:
            self._plain = ["".join(s.text for s in line if not s.control) for line in lines]
            self._folded = "\n".join(self._plain).casefold()
        return self._plain

    def folded(self, width: int, render: LineRenderer) -> str:
        """All of the entry's text, case-folded: one substring test tells whether it matches."""
        self.plain(width, render)
        return self._folded


@dataclass(frozen=True, slots=True)
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
        self.current = -1
        """The selected match's number, or -1."""
        self._hits: list[int] = []  # entries with matches, in order
        self._firsts: list[int] = []  # the number of each one's first match
        self._total = 0
        self._positions: dict[int, list[Match]] = {}
        self._counts: dict[int, int] = {}  # entry -> its number of matches
        self._unsearched: set[int] = set()  # entries the current search has yet to look at
        self._warm = 0  # entries before this one are rendered at ``width`` (see prerender)

    # --- content ----------------------------------------------------------------------------

    def append(self, entry: Entry) -> None:
        self.entries.append(entry)
        if self.query:
            self._count_entry(len(self.entries) - 1)

    def clear(self) -> None:
        self.entries.clear()
        self._warm = 0
        self.top, self.follow = (0, 0), True
        self.close_search()

    def resize(self, width: int, height: int) -> None:
        if max(1, width) != self.width:
            self._warm = 0
        self.width, self.height = max(1, width), max(1, height)
        if self.query:  # lines wrap differently now: search everything again
            query, self.query = self.query, ""
            self.search(query, keep=True)

    def prerender(self, seconds: float) -> bool:
        """Render entries not yet rendered at this width for about ``seconds`` (the pane calls
        this while idle, so that a search rarely has to render anything); True when all are.
        """
        deadline = time.perf_counter() + seconds
        found = False
        while self._warm < len(self.entries):
            if time.perf_counter() > deadline:
                break
            self.entries[self._warm].plain(self.width, self._render)
            if self._warm in self._unsearched:
                self._unsearched.discard(self._warm)
                found = self._count_entry(self._warm, at_end=False) or found
            self._warm += 1
        if found:
            self._renumber()
        return self._warm >= len(self.entries)

    @property
    def search_complete(self) -> bool:
        """Whether every entry has been searched (else the count is still growing)."""
        return not self._unsearched

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
    #
    # Counting is cheap (a substring count over each entry's case-folded text, in C); the
    # positions of the matches are worked out only for the entries that are shown or selected.
    # 10,000 messages hold ~100,000 matches of a short word: as Match objects on every typed key
    # that would cost more than all the rest.

    @property
    def match_count(self) -> int:
        return self._total

    def search(self, query: str, *, keep: bool = False) -> None:
        """Find ``query`` (case-insensitive) in every rendered line; select the match nearest
        below the top of the view (``keep``: the same match number as before). A query that
        extends the previous one only looks in the entries that matched it.
        """
        previous, narrowing = self.current, bool(self.query) and query.startswith(self.query)
        candidates = self._hits if narrowing else range(len(self.entries))
        self.query = query
        self._hits, self._firsts, self._total = [], [], 0
        self._positions.clear()
        self._counts.clear()
        self.current = -1
        if not query:
            self._unsearched = set()
            return
        if not narrowing:
            # Entries not rendered yet are searched as the idle prerendering reaches them (the
            # count grows meanwhile): a search right after opening a long session answers at
            # once from what is rendered instead of rendering everything first.
            self._unsearched = {
                index
                for index in range(self._warm, len(self.entries))
                if not self.entries[index].rendered(self.width)
            }
        for index in candidates:
            if index not in self._unsearched:
                self._count_entry(index)
        if not self._total:
            return
        if keep and 0 <= previous < self._total:
            self.current = previous
        else:
            self.current = self._first_from(self.anchor())
        self._reveal()

    def _count_entry(self, index: int, *, at_end: bool = True) -> bool:
        """Count ``index``'s matches; ``at_end``: it comes after every entry counted so far
        (else :meth:`_renumber` must run after).
        """
        found = self.entries[index].folded(self.width, self._render).count(self.query.casefold())
        if found:
            self._counts[index] = found
            if at_end:
                self._hits.append(index)
                self._firsts.append(self._total)
                self._total += found
            else:
                bisect.insort(self._hits, index)
        return bool(found)

    def _renumber(self) -> None:
        """Entries found by the prerendering joined the hits: number the matches again, keeping
        the selected one (or selecting the first below the view's top, if none was).
        """
        selected = self.selected
        self._firsts, self._total = [], 0
        for index in self._hits:
            self._firsts.append(self._total)
            self._total += self._counts[index]
        if selected is None:
            self.current = self._first_from(self.anchor())
            self._reveal()
        else:
            slot = bisect.bisect_left(self._hits, selected.entry)
            self.current = self._firsts[slot] + self.entry_matches(selected.entry).index(selected)

    def _first_from(self, here: tuple[int, int]) -> int:
        """The number of the first match at or below ``here`` (else the last match)."""
        slot = bisect.bisect_left(self._hits, here[0])
        while slot < len(self._hits):
            for number, match in enumerate(self.entry_matches(self._hits[slot])):
                if (match.entry, match.line) >= here:
                    return self._firsts[slot] + number
            slot += 1
        return self._total - 1

    def entry_matches(self, index: int) -> list[Match]:
        """The matches in entry ``index``, top down (worked out when first asked for)."""
        cached = self._positions.get(index)
        if cached is not None:
            return cached
        found: list[Match] = []
        needle = self.query.casefold()
        if needle and needle in self.entries[index].folded(self.width, self._render):
            for number, text in enumerate(self.entries[index].plain(self.width, self._render)):
                haystack = text.casefold()
                start = haystack.find(needle)
                while start >= 0:
                    found.append(Match(index, number, start, start + len(needle)))
                    start = haystack.find(needle, start + len(needle))
        self._positions[index] = found
        return found

    def match(self, number: int) -> Match:
        """Match ``number`` (0-based, in transcript order)."""
        slot = bisect.bisect_right(self._firsts, number) - 1
        return self.entry_matches(self._hits[slot])[number - self._firsts[slot]]

    @property
    def selected(self) -> Match | None:
        return self.match(self.current) if self.current >= 0 else None

    def step(self, direction: int) -> None:
        """Select the next (1) or previous (-1) match, wrapping around."""
        if not self._total:
            return
        self.current = (self.current + direction) % self._total
        self._reveal()

    def close_search(self) -> None:
        self.query, self.current = "", -1
        self._hits, self._firsts, self._total = [], [], 0
        self._positions.clear()
        self._unsearched = set()

    def _reveal(self) -> None:
        """Scroll so the selected match is on screen (a third of the way down, when moving)."""
        match = self.match(self.current)
        if any((e, n) == (match.entry, match.line) for e, n, _ in self.visible()):
            return
        self.show_entry(match.entry, match.line, context=self.height // 3)
