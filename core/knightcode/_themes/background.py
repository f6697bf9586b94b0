"""Whether the terminal's background is dark or light: the default theme when the user chose
none.

``COLORFGBG`` (set by rxvt, Konsole, iTerm2 and others: ``"15;0"`` is light text on black) is
read first, for free. Otherwise the terminal is asked its background colour (OSC 11) followed
by a primary device attributes request (DA1), which every terminal answers: the DA1 reply marks
the end, so a terminal that ignores OSC 11 costs one round trip, not a timeout, and no late
reply is left behind for the editor to read. The whole exchange is bounded by ``timeout``.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import time
from collections.abc import Mapping
from typing import Literal

__all__ = ["Background", "detect_background", "from_colorfgbg", "from_osc11_reply"]

Background = Literal["dark", "light"]

_QUERY = b"\x1b]11;?\x1b\\\x1b[c"
_RGB = re.compile(rb"\x1b\]11;rgba?:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})")
_DA1 = re.compile(rb"\x1b\[\?[0-9;]*c")
_LIGHT_ANSI = frozenset({7, *range(9, 16)})


def from_colorfgbg(value: str | None) -> Background | None:
    """The background ``COLORFGBG``'s last field names (an ANSI colour index), if any."""
    if not value:
        return None
    last = value.split(";")[-1]
    if not last.isdigit():
        return None
    return "light" if int(last) in _LIGHT_ANSI else "dark"


def from_osc11_reply(reply: bytes) -> Background | None:
    """The background of an OSC 11 reply (``ESC ] 11 ; rgb:RRRR/GGGG/BBBB``), by its
    luminance.
    """
    match = _RGB.search(reply)
    if match is None:
        return None
    red, green, blue = (int(part, 16) / (16 ** len(part) - 1) for part in match.groups())
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return "light" if luminance > 0.5 else "dark"


def _ask_terminal(timeout: float) -> bytes:
    """The terminal's replies to the OSC 11 + DA1 query ('' when there is no terminal)."""
    import termios
    import tty

    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return b""
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        os.close(fd)
        return b""
    reply = b""
    try:
        tty.setraw(fd, termios.TCSANOW)
        os.write(fd, _QUERY)
        deadline = time.monotonic() + timeout
        while _DA1.search(reply) is None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            reply += os.read(fd, 1024)
    except OSError:
        pass
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        os.close(fd)
    return reply


def detect_background(
    env: Mapping[str, str] | None = None, *, timeout: float = 0.15, ask: bool = True
) -> Background:
    """``dark`` or ``light`` (``dark`` when nothing tells)."""
    environ = os.environ if env is None else env
    found = from_colorfgbg(environ.get("COLORFGBG"))
    if found is None and ask:
        found = from_osc11_reply(_ask_terminal(timeout))
    return found or "dark"
