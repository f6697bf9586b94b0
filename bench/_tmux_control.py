"""A tmux control-mode client for timing what a program shows, without polling by subprocess.

:class:`knightcode.testing.tmux.TmuxSession` runs one ``tmux`` process per command (~4 ms each),
fine for tests but too coarse to time a keystroke's echo. A control-mode client (``tmux -C
attach``) is one long-lived connection: commands cost ~0.1 ms, and tmux pushes an ``%output``
line the moment the program writes to its terminal. :meth:`ControlClient.wait_screen` therefore
captures the screen only when something was written, and dates a match by the arrival of the
output that produced it.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import subprocess
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

from knightcode.testing.tmux import TmuxSession

__all__ = ["ControlClient", "ProgramExited", "ScreenTimeout"]


class ProgramExited(Exception):
    """The program ended before the screen showed what was waited for."""

    def __init__(self, status: int | None, screen: str) -> None:
        super().__init__(f"the program exited with status {status}")
        self.status = status
        self.screen = screen


class ScreenTimeout(Exception):
    """The screen did not show what was waited for in time."""

    def __init__(self, timeout: float, screen: str) -> None:
        super().__init__(f"not on the screen after {timeout:g} s")
        self.screen = screen


class ControlClient:
    """A control-mode connection to a :class:`TmuxSession`'s server, attached to its session.

    A control client without a size of its own does not resize the window.
    """

    def __init__(self, session: TmuxSession) -> None:
        self.session = session
        self._process = subprocess.Popen(
            ["tmux", "-S", session.socket, "-C", "attach-session", "-t", "main"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._stdin = self._process.stdin
        self._fd = self._process.stdout.fileno()
        self._buffer = b""
        self.changed = True
        """Whether output arrived since the last capture (true at first: nothing captured yet)."""
        self.last_output = time.perf_counter()
        """``perf_counter()`` when the latest ``%output`` notification was read."""
        self.output_events = 0

    # --- protocol -------------------------------------------------------------------------

    def _lines(self, timeout: float | None) -> list[bytes]:
        """Read what is available (waiting up to ``timeout`` for the first bytes) as lines."""
        ready, _, _ = select.select([self._fd], [], [], timeout)
        if not ready:
            return []
        data = os.read(self._fd, 1 << 20)
        if not data:
            raise ConnectionError("the tmux control client ended")
        now = time.perf_counter()
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            if line.startswith(b"%output "):
                self.changed = True
                self.last_output = now
                self.output_events += 1
        return lines

    def command(self, line: str) -> list[str]:
        """Run one tmux command over the connection and return its output lines."""
        self._stdin.write(line.encode() + b"\n")
        out: list[str] = []
        inside = False
        while True:
            for raw in self._lines(None):
                if not inside:
                    # flags 1 = the answer to a command of this client; 0 = the attach itself
                    inside = raw.startswith(b"%begin ") and raw.endswith(b" 1")
                elif raw.startswith((b"%end ", b"%error ")) and raw.endswith(b" 1"):
                    if raw.startswith(b"%error "):
                        raise RuntimeError(f"tmux {line}: {' '.join(out)}")
                    return out
                else:
                    out.append(raw.decode("utf-8", "replace"))

    def pump(self, timeout: float) -> None:
        """Read notifications for up to ``timeout`` seconds (returns early once output came)."""
        self._lines(timeout)

    # --- screen ---------------------------------------------------------------------------

    def capture(self) -> str:
        """The visible screen (as :meth:`TmuxSession.capture` gives it); clears :attr:`changed`."""
        self.changed = False
        lines = [line.rstrip() for line in self.command("capture-pane -p -J -t main")]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def send_text(self, text: str) -> float:
        """Type ``text`` literally; returns ``perf_counter()`` just before the keys were sent."""
        quoted = "'" + text.replace("'", "'\\''") + "'"
        sent = time.perf_counter()
        self.command(f"send-keys -t main -l -- {quoted}")
        return sent

    def send_keys(self, *keys: str) -> float:
        """Press tmux-named keys; returns ``perf_counter()`` just before they were sent."""
        sent = time.perf_counter()
        self.command("send-keys -t main " + " ".join(keys))
        return sent

    def dead(self) -> bool:
        """Whether the program has ended (its terminal closed)."""
        return self.command("display-message -p -t main '#{pane_dead}'") == ["1"]

    def wait_screen(
        self, matches: Callable[[str], bool] | re.Pattern[str] | str, timeout: float
    ) -> tuple[float, str]:
        """Wait until the screen satisfies ``matches``; return when the output that made it so
        arrived (``perf_counter()``) and the screen.

        :raises ProgramExited: the program ended first
        :raises ScreenTimeout: not within ``timeout`` seconds
        """
        if isinstance(matches, str):
            text = matches
            matches = lambda screen: text in screen  # noqa: E731
        elif isinstance(matches, re.Pattern):
            regex = matches
            matches = lambda screen: regex.search(screen) is not None  # noqa: E731
        deadline = time.perf_counter() + timeout
        next_exit_check = 0.0
        screen = ""
        while True:
            if self.changed:
                stamp = self.last_output
                screen = self.capture()
                if matches(screen):
                    return stamp, screen
            now = time.perf_counter()
            if now >= next_exit_check:
                next_exit_check = now + 0.1
                if self.dead():
                    raise ProgramExited(self.session.exit_status(), self.capture())
            if now >= deadline:
                raise ScreenTimeout(timeout, self.capture())
            self.pump(min(deadline - now, 0.1))

    # --- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        """Detach (closing stdin ends a control client)."""
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
