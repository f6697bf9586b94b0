r"""Drive a program in a real tmux, for end-to-end tests of a terminal UI.

Each :class:`TmuxSession` runs its own tmux server on a private socket in a temporary directory
(never the user's tmux), started with ``-f /dev/null`` and the few options a terminal UI test
needs: ``extended-keys on`` (tmux forwards modified keys such as shift+enter only to a program
that asked for them with xterm's modifyOtherKeys, ``CSI > 4 ; 2 m``), ``escape-time 0`` (a lone
Escape is not held back), a large history and ``remain-on-exit`` (so the last screen and the exit
status stay readable after the program ends)::

    from knightcode.testing.tmux import TmuxSession

    with TmuxSession.start(["knightcode"], cwd=project, env=env) as tmux:
        tmux.wait_for("scripted-model")
        tmux.send_text("hello")
        tmux.send_keys("Enter")
        tmux.wait_for(re.compile(r"Hello, \w+"))
        tmux.send_keys("C-d")
        assert tmux.wait_exit() == 0

tmux 3.3 can lose what a program writes when the program ends within milliseconds of its start
(a test of a real UI never sees this; a test of ``sh -c 'echo x; exit 1'`` may).

Waits poll ``capture-pane`` (every 20 ms by default) until the screen matches; there are no
fixed sleeps, and a wait that times out raises :class:`AssertionError` showing the last screen.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ["TmuxError", "TmuxSession", "tmux_available"]

_TARGET = "main"
_TERMINFO_DIRS = ("/etc/terminfo", "/lib/terminfo", "/usr/share/terminfo", "/usr/lib/terminfo")


class TmuxError(RuntimeError):
    """A tmux command failed (tmux missing, a bad key name, the server gone)."""


def tmux_available() -> bool:
    """Whether a ``tmux`` executable is on PATH (tests skip or fail on this)."""
    return shutil.which("tmux") is not None


def _has_terminfo(name: str) -> bool:
    """Whether a terminfo entry ``name`` is installed (looked up where ncurses looks)."""
    dirs = [os.environ.get("TERMINFO", ""), str(Path.home() / ".terminfo")]
    dirs += os.environ.get("TERMINFO_DIRS", "").split(":")
    dirs += _TERMINFO_DIRS
    for folder in filter(None, dirs):
        for sub in (name[0], f"{ord(name[0]):x}"):
            if (Path(folder) / sub / name).exists():
                return True
    return False


def default_terminal() -> str:
    """``tmux-256color`` when its terminfo entry exists, else ``screen-256color``."""
    return "tmux-256color" if _has_terminfo("tmux-256color") else "screen-256color"


def _kill_server(tmux: str, socket: str, folder: str | None) -> None:
    """Stop a tmux server and its program and remove its private folder; safe to call twice.

    tmux sends the program SIGHUP and exits at once; the program is waited for (2 s, then
    SIGKILL) so that a test never leaves it running behind it.
    """
    pid = None
    with contextlib.suppress(OSError, subprocess.SubprocessError, ValueError):
        shown = subprocess.run(
            [tmux, "-S", socket, "display-message", "-p", "-t", _TARGET, "#{pane_pid}"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        pid = int(shown.stdout) if shown.returncode == 0 else None
        subprocess.run(
            [tmux, "-S", socket, "kill-server"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=10,
            check=False,
        )
    if pid is not None:
        _wait_gone(pid, timeout=2.0)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _zombie_status(pid) is None


def _wait_gone(pid: int, *, timeout: float) -> None:
    """Wait for process ``pid`` to end; SIGKILL it if it is still there after ``timeout``."""
    deadline = time.monotonic() + timeout
    killed = False
    while _running(pid):
        if time.monotonic() >= deadline:
            if killed:
                return
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            killed, deadline = True, time.monotonic() + 1.0
        time.sleep(0.01)


class TmuxSession:
    """One program running in one pane of a private tmux server.

    Build it with :meth:`start`; use it as a context manager (or call :meth:`kill`) so the server
    goes away. The server is also killed when the object is garbage-collected or the interpreter
    exits, so a failing test does not leave tmux servers behind.
    """

    def __init__(
        self, *, tmux: str, socket: str, folder: str | None, command: Sequence[str]
    ) -> None:
        self._tmux = tmux
        self.socket = socket
        """Path of this session's tmux socket (``tmux -S <socket> ...`` attaches to it)."""
        self.command = tuple(command)
        self._finalizer = weakref.finalize(self, _kill_server, tmux, socket, folder)

    @classmethod
    def start(
        cls,
        command: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        width: int = 100,
        height: int = 30,
        socket: str | os.PathLike[str] | None = None,
        terminal: str | None = None,
        extended_keys: str = "on",
    ) -> TmuxSession:
        """Start a tmux server on a private socket running ``command`` in a ``width`` x ``height``
        pane.

        :param command: the program and its arguments (run with ``exec`` from ``/bin/sh``, so the
            pane's process is the program itself)
        :param cwd: the program's working directory (default: this process's)
        :param env: the program's environment (default: this process's), to which tmux adds
            ``TERM`` (``terminal``), ``TMUX`` and ``TMUX_PANE``
        :param socket: the socket path (default: ``tmux.sock`` in a new temporary folder, removed
            by :meth:`kill`)
        :param terminal: ``default-terminal`` (default: :func:`default_terminal`)
        :param extended_keys: tmux's ``extended-keys`` (``on``, ``off`` or ``always``)
        :raises TmuxError: tmux is missing or would not start
        """
        tmux = shutil.which("tmux")
        if tmux is None:
            raise TmuxError("tmux is not installed (apt-get install tmux)")
        folder: str | None = None
        if socket is None:
            folder = tempfile.mkdtemp(prefix="kc-tmux-")
            socket = os.path.join(folder, "tmux.sock")
        server_env = dict(os.environ if env is None else env)
        server_env.pop("TMUX", None)  # a test run from inside tmux must not reach that tmux
        argv = [tmux, "-S", os.fspath(socket), "-f", "/dev/null", "start-server"]
        options = [
            ("-s", "escape-time", "0"),
            ("-s", "extended-keys", extended_keys),
            ("-g", "default-terminal", terminal or default_terminal()),
            ("-g", "default-shell", "/bin/sh"),
            ("-g", "history-limit", "50000"),
            ("-g", "remain-on-exit", "on"),
            ("-g", "remain-on-exit-format", ""),
            ("-g", "status", "off"),
        ]
        for scope, name, value in options:
            argv += [";", "set-option", scope, name, value]
        argv += [";", "new-session", "-d", "-s", _TARGET, "-x", str(width), "-y", str(height)]
        argv += ["-c", os.fspath(cwd if cwd is not None else os.getcwd())]
        argv += ["exec " + shlex.join(command)]
        try:
            done = subprocess.run(
                argv, env=server_env, capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.SubprocessError) as error:
            _kill_server(tmux, os.fspath(socket), folder)
            raise TmuxError(f"tmux did not start: {error}") from error
        if done.returncode != 0:
            _kill_server(tmux, os.fspath(socket), folder)
            raise TmuxError(f"tmux did not start: {done.stderr.strip()}")
        return cls(tmux=tmux, socket=os.fspath(socket), folder=folder, command=command)

    # --- plumbing -------------------------------------------------------------------------

    def tmux(self, *args: str) -> str:
        """Run one tmux command against this session's server and return its output.

        :raises TmuxError: the command failed (its stderr is in the message)
        """
        done = subprocess.run(
            [self._tmux, "-S", self.socket, *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if done.returncode != 0:
            raise TmuxError(f"tmux {shlex.join(args)}: {done.stderr.strip() or done.returncode}")
        return done.stdout

    def _display(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", _TARGET, fmt).strip()

    # --- input ----------------------------------------------------------------------------

    def send_keys(self, *keys: str) -> None:
        """Press keys given by tmux key names: ``"Enter"``, ``"C-d"``, ``"S-Enter"``, ``"BTab"``,
        ``"Escape"``, ``"Up"``, ``"M-b"``, ``"C-S-f"``, ``"BSpace"``...

        A modified key that has no legacy byte form (shift+enter, ctrl+enter, ctrl+shift+letter,
        ctrl+backspace) reaches the program as ``CSI code ; modifiers u`` only once the program
        has asked for modifyOtherKeys (``CSI > 4 ; 2 m``); before that tmux 3.3 drops it or types
        its name (``S-Enter`` arrives as the seven characters).
        A string that is not a key name is typed as its characters; prefer :meth:`send_text`.
        """
        if keys:
            self.tmux("send-keys", "-t", _TARGET, *keys)

    def send_text(self, text: str) -> None:
        r"""Type ``text`` literally (UTF-8, no key-name lookup).

        ``"\n"`` is a line feed, not Enter (tmux sends Enter as ``\r``).
        """
        if text:
            self.tmux("send-keys", "-t", _TARGET, "-l", "--", text)

    def send_raw(self, data: bytes) -> None:
        r"""Send exact bytes as if the terminal had sent them.

        For example ``b"\x1b[13;2u"`` (a Kitty CSI-u shift+enter), to test a decoder with
        sequences tmux would not produce itself.
        """
        if data:
            self.tmux("send-keys", "-t", _TARGET, "-H", *(f"{byte:02x}" for byte in data))

    def paste(self, text: str) -> None:
        """Paste ``text`` as a terminal does.

        It is wrapped in bracketed-paste markers when the program enabled bracketed paste
        (``CSI ? 2004 h``), and line feeds become carriage returns, as xterm sends them.
        """
        self.tmux("set-buffer", "-b", "kc-paste", "--", text)
        self.tmux("paste-buffer", "-p", "-d", "-b", "kc-paste", "-t", _TARGET)

    # --- output ---------------------------------------------------------------------------

    def capture(self, *, escapes: bool = False) -> str:
        """The visible screen as text, wrapped lines joined, trailing blanks of each line removed.

        :param escapes: keep colours and attributes as SGR escape sequences (``capture-pane -e``)
        """
        return self._capture(history=False, escapes=escapes)

    def capture_history(self, *, escapes: bool = False) -> str:
        """The scrollback and the visible screen, as :meth:`capture` gives them."""
        return self._capture(history=True, escapes=escapes)

    def _capture(self, *, history: bool, escapes: bool) -> str:
        return self._look(history=history, escapes=escapes)[0]

    def _look(self, *, history: bool, escapes: bool) -> tuple[str, bool]:
        """The screen and whether the program has ended, from one tmux command."""
        args = ["capture-pane", "-p", "-J", "-t", _TARGET]
        if history:
            args += ["-S", "-"]
        if escapes:
            args.append("-e")
        args += [";", "display-message", "-p", "-t", _TARGET, "#{pane_dead}"]
        *lines, dead = self.tmux(*args).rstrip("\n").split("\n")
        lines = [line.rstrip() for line in lines]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines), dead == "1"

    def cursor(self) -> tuple[int, int]:
        """The cursor position in the pane as ``(x, y)``, from 0."""
        x, y = self._display("#{cursor_x} #{cursor_y}").split()
        return int(x), int(y)

    def size(self) -> tuple[int, int]:
        """The pane size as ``(width, height)``."""
        width, height = self._display("#{pane_width} #{pane_height}").split()
        return int(width), int(height)

    # --- waiting --------------------------------------------------------------------------

    def wait_for(
        self,
        pattern: str | re.Pattern[str],
        timeout: float = 10.0,
        *,
        history: bool = False,
        interval: float = 0.02,
    ) -> re.Match[str]:
        """Wait until the screen shows ``pattern`` and return the match.

        :param pattern: a ``str`` is matched literally; pass ``re.compile(...)`` for a regex
            (``re.MULTILINE`` lets ``^``/``$`` anchor at screen lines)
        :param history: search the scrollback too
        :param interval: seconds between two looks at the screen
        :raises AssertionError: not shown within ``timeout`` seconds, or the program ended without
            showing it (at once: the screen cannot change any more); the message holds the screen
        """
        regex = _regex(pattern)
        deadline = time.monotonic() + timeout
        while True:
            screen, ended = self._look(history=history, escapes=False)
            found = regex.search(screen)
            if found is not None:
                return found
            if ended:  # the screen will not change any more: fail now, not at the timeout
                status = self.wait_exit(timeout=2.0)
                raise AssertionError(
                    f"{_describe(pattern)} not on the screen: the program exited with status "
                    f"{status}\n{_framed(screen)}"
                )
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"{_describe(pattern)} not on the screen after {timeout:g} s\n{_framed(screen)}"
                )
            time.sleep(interval)

    def wait_gone(
        self,
        pattern: str | re.Pattern[str],
        timeout: float = 10.0,
        *,
        history: bool = False,
        interval: float = 0.02,
    ) -> None:
        """Wait until the screen no longer shows ``pattern`` (matched as :meth:`wait_for` does).

        :raises AssertionError: still shown after ``timeout`` seconds
        """
        regex = _regex(pattern)
        deadline = time.monotonic() + timeout
        while True:
            screen = self._capture(history=history, escapes=False)
            if regex.search(screen) is None:
                return
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"{_describe(pattern)} still on the screen after {timeout:g} s\n"
                    f"{_framed(screen)}"
                )
            time.sleep(interval)

    def exit_status(self) -> int | None:
        """The program's exit status if it has ended (``-N`` when killed by signal N), else None."""
        dead, status, signal, pid = self._display(
            "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}|#{pane_pid}"
        ).split("|")
        if dead != "1":
            return None
        if status or signal:
            return -int(signal) if signal else int(status)
        # tmux marks the pane dead when its terminal closes, before it has collected the exit
        # status; and tmux 3.3 sometimes never collects it (a program that ends right after
        # start stays a zombie). The kernel keeps a zombie's wait status in /proc.
        return _zombie_status(int(pid)) if pid else None

    def wait_exit(self, timeout: float = 10.0, *, interval: float = 0.02) -> int:
        """Wait until the program ends and return its exit status (``-N`` for signal N).

        :raises AssertionError: still running after ``timeout`` seconds (with the last screen)
        """
        deadline = time.monotonic() + timeout
        while True:
            status = self.exit_status()
            if status is not None:
                return status
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"{shlex.join(self.command)} still running after {timeout:g} s\n"
                    f"{_framed(self.capture())}"
                )
            time.sleep(interval)

    # --- control --------------------------------------------------------------------------

    def resize(self, width: int, height: int) -> None:
        """Resize the terminal; the program gets SIGWINCH."""
        self.tmux("resize-window", "-t", _TARGET, "-x", str(width), "-y", str(height))

    def pid(self) -> int:
        """The process id of the program (the pane's process)."""
        return int(self._display("#{pane_pid}"))

    def kill(self) -> None:
        """Stop the tmux server (the program gets SIGHUP) and remove the private socket folder."""
        self._finalizer()

    @property
    def alive(self) -> bool:
        """Whether :meth:`kill` has not been called yet."""
        return self._finalizer.alive

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.kill()


def _zombie_status(pid: int) -> int | None:
    """The exit status of process ``pid`` if it is a zombie (Linux ``/proc/<pid>/stat``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # after "pid (comm)", which may hold spaces
    if not fields or fields[0] != "Z":
        return None
    return os.waitstatus_to_exitcode(int(fields[-1]))


def _regex(pattern: str | re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(re.escape(pattern)) if isinstance(pattern, str) else pattern


def _describe(pattern: str | re.Pattern[str]) -> str:
    return f"text {pattern!r}" if isinstance(pattern, str) else f"pattern {pattern.pattern!r}"


def _framed(screen: str) -> str:
    """The screen between rules, so blank lines and edges are visible in a failure message."""
    rule = "-" * 40
    return f"{rule} screen {rule}\n{screen}\n{rule}{'-' * 8}{rule}"
