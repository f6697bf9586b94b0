"""What the interactive UI asks of the terminal beyond what Textual does, and undoes on the way out.

Textual requests the Kitty keyboard protocol (``CSI > 1 u``) and pops it on exit. Terminals that
do not speak it — tmux among them — still tell ``shift+enter``, ``ctrl+enter``, ``shift+tab``,
ctrl+shift+letter and ``ctrl+backspace`` apart once a program asks for xterm's *modifyOtherKeys*
level 2 (``CSI > 4 ; 2 m``), as the reference does; Textual's parser decodes those sequences
(``CSI 27 ; mod ; code ~``). So both are asked for, and modifyOtherKeys is reset
(``CSI > 4 ; 0 m``) whenever the terminal is handed back: on exit, on suspend (``ctrl+z``,
the external editor) and if knightcode dies of an exception, so the user's shell never inherits
odd key sequences.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["KeyboardModes", "handed_back"]

MODIFY_OTHER_KEYS_ON = "\x1b[>4;2m"
MODIFY_OTHER_KEYS_OFF = "\x1b[>4;0m"
#: Kitty flags 1 (disambiguate) + 4 (report alternate keys) on the entry Textual pushed (flag 1):
#: with the base-layout key, ctrl+c is ctrl+c on a non-Latin layout too. Textual pops the entry.
KITTY_FLAGS = "\x1b[=5;1u"


class KeyboardModes:
    """Switches modifyOtherKeys on and off on the terminal Textual draws to (its stderr)."""

    def __init__(self) -> None:
        self._on = False

    def _write(self, sequence: str) -> None:
        stream = sys.__stderr__
        if stream is None:
            return
        # Straight to the descriptor: this also runs after Textual's writer has stopped.
        with contextlib.suppress(OSError, ValueError):
            os.write(stream.fileno(), sequence.encode())

    def enable(self) -> None:
        """Ask for modifyOtherKeys (idempotent)."""
        if not self._on:
            self._write(MODIFY_OTHER_KEYS_ON + KITTY_FLAGS)
            self._on = True

    def disable(self) -> None:
        """Give the terminal back its normal key reporting (idempotent)."""
        if self._on:
            self._write(MODIFY_OTHER_KEYS_OFF)
            self._on = False


@contextlib.contextmanager
def handed_back(app: App[int], keyboard: KeyboardModes) -> Iterator[None]:
    """Give the terminal back for a while (``ctrl+z``, the external editor, a login flow that
    runs a program) and take it again: Textual's inline driver cannot suspend on its own.

    The live region is cleared (the transcript above it stays), the terminal's modes are
    restored as they were before knightcode started, and on the way back the region is drawn
    afresh where the cursor then is.
    """
    driver = app._driver
    if driver is None:
        yield
        return
    from textual.geometry import Offset

    x, y = app._previous_cursor_position
    driver.write(f"\x1b[{x}D" * bool(x) + f"\x1b[{y}A" * bool(y) + "\r\x1b[J\x1b[?25h")
    driver.flush()
    keyboard.disable()
    driver.stop_application_mode()
    try:
        yield
    finally:
        driver.start_application_mode()
        keyboard.enable()
        app._previous_cursor_position = Offset(0, 0)
        app.refresh(layout=True)
