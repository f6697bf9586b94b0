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

__all__ = ["KeyboardModes"]

MODIFY_OTHER_KEYS_ON = "\x1b[>4;2m"
MODIFY_OTHER_KEYS_OFF = "\x1b[>4;0m"


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
            self._write(MODIFY_OTHER_KEYS_ON)
            self._on = True

    def disable(self) -> None:
        """Give the terminal back its normal key reporting (idempotent)."""
        if self._on:
            self._write(MODIFY_OTHER_KEYS_OFF)
            self._on = False
