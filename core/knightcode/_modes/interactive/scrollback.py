"""Writing finished transcript items into the terminal's own scrollback, above the live UI.

The UI runs inline (in the normal screen, like the reference): Textual redraws only a region at
the bottom — the message being streamed, the status, the editor, the footer. Everything finished
is rendered once with rich and written *above* that region, where the terminal's scroll, search
and selection work on it and where it stays after knightcode exits.

How: after each frame Textual leaves the cursor ``_previous_cursor_position`` cells below and
right of the region's top-left corner. Moving back there, writing the lines (each cleared to its
end) and clearing what is below pushes the region down; Textual is told the cursor is at the
region's corner again and repaints it underneath. This touches two private attributes of
Textual's ``App`` (``_driver`` for ordered writes, ``_previous_cursor_position``); the version is
pinned below 9 and ``tests/interactive/test_scrollback.py`` fails if either goes away.

The whole screen is never cleared from its top-left corner: tmux (``scroll-on-clear``, on by
default) would copy the screen into the scrollback, duplicating the region.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["Scrollback"]

CLEAR_TO_LINE_END = "\x1b[K"
CLEAR_BELOW = "\x1b[J"
#: Clear the screen, then the terminal's scrollback, then go home (a full reprint).
CLEAR_ALL = "\x1b[2J\x1b[3J\x1b[H"


def _move(dx: int, dy: int) -> str:
    sequence = ""
    if dx < 0:
        sequence += f"\x1b[{-dx}D"
    elif dx > 0:
        sequence += f"\x1b[{dx}C"
    if dy < 0:
        sequence += f"\x1b[{-dy}A"
    elif dy > 0:
        sequence += f"\x1b[{dy}B"
    return sequence


class Scrollback:
    """Writes rendered lines above an inline Textual app (or straight to the terminal before
    the app runs and after it stops).
    """

    def __init__(self, app: App[int]) -> None:
        self._app = app

    def write(self, text: str, *, reprint: bool = False) -> None:
        """Write ``text`` (ANSI, lines separated by newlines) above the live region.

        :param reprint: clear the screen and the scrollback first (the transcript is being
            printed again, e.g. with tool output expanded)
        """
        body = "".join(f"{line}{CLEAR_TO_LINE_END}\r\n" for line in text.split("\n"))
        app = self._app
        driver = app._driver
        if driver is None or not driver.is_inline or not app.is_running:
            self._write_direct((CLEAR_ALL if reprint else "") + body)
            return
        from textual.geometry import Offset

        x, y = app._previous_cursor_position
        prefix = CLEAR_ALL if reprint else _move(-x, -y) + "\r"
        driver.write(prefix + body + CLEAR_BELOW)
        driver.flush()
        app._previous_cursor_position = Offset(0, 0)
        app.screen.refresh()  # repaint the whole region below what was written

    def write_control(self, sequence: str) -> None:
        """Send a control sequence that draws nothing (a window title), in order with frames."""
        driver = self._app._driver
        if driver is None or not self._app.is_running:
            self._write_direct(sequence)
        else:
            driver.write(sequence)
            driver.flush()

    @staticmethod
    def _write_direct(data: str) -> None:
        stream = sys.__stderr__
        if stream is None:
            return
        encoded = data.encode()
        try:
            fd = stream.fileno()
            while encoded:
                encoded = encoded[os.write(fd, encoded) :]
        except (OSError, ValueError):
            pass
