"""``knightcode keys doctor``: which of the user's keys this terminal delivers, and the key echo.

On a terminal the command takes it over in raw mode: it asks the terminal which key encodings it
speaks (:func:`knightcode._keys.probe.query_terminal`), prints the analysis
(:mod:`knightcode._keys.doctor`), offers to write the proposals to keybindings.json, and then
shows the key id of every key pressed, decoded exactly as the interactive UI decodes it (Textual's
parser with :func:`knightcode._keys.textual_keys.install_modify_other_keys_fix`), until ctrl+c is
pressed twice. Without a terminal it prints the analysis from the environment and tmux alone.
The terminal's modes are restored however the command ends.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from knightcode._errors import ConfigError, UsageError

if TYPE_CHECKING:
    from knightcode._keys.doctor import Encoding, Terminal
    from knightcode._plugins.definitions import ShortcutDefinition

__all__ = ["keys"]

#: Pushed for the echo (Kitty flags 1 + 4, as the UI uses) and popped after; modifyOtherKeys
#: level 2 was set by the query and is reset.
_KITTY_PUSH = b"\x1b[>5u"
_RESTORE = b"\x1b[<u\x1b[>4;0m"
_QUIT_PRESSES = 2


@click.group()
def keys() -> None:
    """Check which keys this terminal can send to knightcode."""


@keys.command("doctor")
@click.option("--write", is_flag=True, help="Write the proposed keys to keybindings.json.")
@click.option("--no-echo", is_flag=True, help="Print the analysis and exit; no key echo.")
@click.option(
    "--timeout",
    type=float,
    default=0.5,
    show_default=True,
    help="Seconds to wait for the terminal's answers.",
)
def doctor(write: bool, no_echo: bool, timeout: float) -> None:
    """Show this terminal's keyboard protocol, tmux's extended-keys, every binding it cannot
    deliver or that collides with the terminal or tmux, and working alternatives; then echo the
    key id of each key pressed (ctrl+c twice quits).
    """
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if not interactive:
        _run(write=write, echo=False, encoding="unknown", out=_Plain())
        return
    fd = sys.stdin.fileno()
    with _raw(fd) as out:
        encoding, _ = _query(fd, out, timeout)
        _run(write=write, echo=not no_echo, encoding=encoding, out=out)


class _Plain:
    """Lines to stdout as usual."""

    raw = False

    def line(self, text: str = "") -> None:
        click.echo(text)

    def warn(self, text: str) -> None:
        click.echo(f"knightcode: warning: {text}", err=True)


class _Raw:
    """Lines to a terminal in raw mode, which does not turn a line feed into CR LF by itself."""

    raw = True

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def line(self, text: str = "") -> None:
        self.write((text + "\n").replace("\n", "\r\n").encode())

    def write(self, data: bytes) -> None:
        os.write(self.fd, data)

    def warn(self, text: str) -> None:
        self.line(f"warning: {text}")


@contextlib.contextmanager
def _raw(fd: int) -> Iterator[_Raw]:
    import termios  # POSIX only: imported when a terminal is taken over
    import tty

    saved = termios.tcgetattr(fd)
    out = _Raw(sys.stdout.fileno())
    tty.setraw(fd)
    try:
        yield out
    finally:
        with contextlib.suppress(OSError):
            out.write(_RESTORE)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _query(fd: int, out: _Raw, timeout: float) -> tuple[Encoding, bytes]:
    from knightcode._keys.probe import query_terminal

    return query_terminal(fd, out.fd, timeout)


def _run(*, write: bool, echo: bool, encoding: Encoding, out: _Plain | _Raw) -> None:
    from knightcode._config.paths import agent_dir
    from knightcode._keys.doctor import active_bindings, analyse, proposed_file_values
    from knightcode._keys.probe import detect
    from knightcode._keys.registry import KeyRegistry
    from knightcode._keys.report import report_lines

    registry = KeyRegistry(agent_dir())
    registry.add_shortcuts(_plugin_shortcuts())
    for warning in registry.warnings:
        out.warn(warning)
    terminal: Terminal = detect(os.environ, encoding)
    bindings = active_bindings(registry)
    findings = analyse(bindings, terminal)
    current = {b.owner: registry.keys_for(b.owner) for b in bindings if not b.is_plugin}
    values = proposed_file_values(findings, current)
    path = registry.path
    for text in report_lines(terminal, findings, values, path):
        out.line(text)
    if values and path is not None:
        if write or (isinstance(out, _Raw) and _confirm(out, f"Write them to {path}? [y/N] ")):
            _write_values(path, values)
            out.line(f"wrote {path}")
        else:
            out.line("(knightcode keys doctor --write writes them)")
    if echo and isinstance(out, _Raw):
        _echo(out)


def _plugin_shortcuts() -> list[tuple[str, ShortcutDefinition]]:
    """The plugins' shortcuts, as the UI would register them (load failures are not ours)."""
    from knightcode._cli.subcommands import _load_host

    with contextlib.redirect_stderr(io.StringIO()):
        host = _load_host(approve=False, extensions=())
    return [(item.owner, item.definition) for item in host.registrations.shortcuts]


def _confirm(out: _Raw, question: str) -> bool:
    out.write(question.encode())
    answer = os.read(0, 64)
    out.line(answer[:1].decode(errors="replace") if answer[:1].isalpha() else "")
    return answer[:1] in (b"y", b"Y")


def _write_values(path: Path, values: dict[str, list[str]]) -> None:
    """Merge ``values`` into the file, keeping every other entry and the file's mode."""
    from knightcode._config.jsonfile import read_json_object, write_json_atomic
    from knightcode._keys.schema import SCHEMA_ID

    try:
        data = read_json_object(path) or {}
    except ConfigError as exc:
        raise UsageError(f"{exc}; not overwriting it") from exc
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    merged: dict[str, object] = {"$schema": SCHEMA_ID} if "$schema" not in data else {}
    merged.update(data)
    merged.update(values)
    write_json_atomic(path, merged, mode)


def _echo(out: _Raw) -> None:
    from textual import events
    from textual._xterm_parser import XTermParser

    from knightcode._keys.textual_keys import install_modify_other_keys_fix, key_ids

    install_modify_other_keys_fix()
    parser = XTermParser()
    out.write(_KITTY_PUSH)
    out.line("")
    out.line("Press keys to see their ids (ctrl+c twice quits).")
    presses = 0
    while presses < _QUIT_PRESSES:
        ready, _, _ = select.select([0], [], [], 0.1)
        if not ready:
            messages = list(parser.tick())
            data = b""
        else:
            data = os.read(0, 1024)
            if not data:
                return
            messages = list(parser.feed(data.decode(errors="replace")))
        for message in messages:
            if not isinstance(message, events.Key):
                continue
            ids = key_ids(message)
            shown = ", ".join(ids) if ids else f"(no key id; Textual reads {message.key!r})"
            raw = f"  {data!r}" if data else ""
            out.line(f"key: {shown}{raw}")
            presses = presses + 1 if "ctrl+c" in ids else 0
