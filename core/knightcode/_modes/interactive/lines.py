"""``Lines``: a widget showing a few already-laid-out lines, redrawn without a layout pass.

The live region and the status line change many times a second while an answer streams. A
``Static`` asks Textual for a full layout on every update (it measures the content's height by
rendering it); here the caller knows the height, so an update that keeps it only repaints, and
only a change of height lays the screen out again. Keeping that work small keeps keystrokes
echoing quickly while the answer streams.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

__all__ = ["Lines"]


class Lines(Widget):
    """Shows a :class:`~rich.text.Text` of a known number of lines (0: hidden)."""

    DEFAULT_CSS = """
    Lines { height: 0; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._text = Text()
        self._count = 0

    def show(self, text: Text | None) -> None:
        """Show ``text``, one screen line per line of it (a longer line is cut with an
        ellipsis, never wrapped); None hides the widget.
        """
        if text is None:
            text = Text()
        text.no_wrap = True
        text.overflow = "ellipsis"
        count = text.plain.count("\n") + 1 if text.plain else 0
        self._text = text
        if count != self._count:
            self._count = count
            self.styles.height = count  # lays out again: the region grows or shrinks
        else:
            self.refresh()

    def render(self) -> Text:
        return self._text
