"""Finding out what sits between the keyboard and knightcode, for ``keys doctor`` and ``/keys``.

Three sources, each cheap and bounded: the environment (``$TMUX``, ``$STY``, ``$TERM_PROGRAM``,
``$WT_SESSION``), tmux's own options (``extended-keys``, ``prefix``, ``prefix2``, asked of the
server ``$TMUX`` names, 2 s at most), and — only when the caller owns the terminal in raw mode —
the terminal's answers to the Kitty keyboard query (``CSI ? u``) and to xterm's modifyOtherKeys
query (``CSI ? 4 m`` after asking for level 2), fenced by a Primary Device Attributes request
(``CSI c``) that every terminal answers, so the wait ends as soon as the terminal has spoken.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import time
from collections.abc import Mapping

from knightcode._keys.doctor import Encoding, Terminal
from knightcode._keys.syntax import KeySyntaxError, canonical

__all__ = ["QUERY", "detect", "parse_replies", "query_terminal", "tmux_key_id"]

#: Ask for modifyOtherKeys level 2, then ask which level is on, the Kitty flags, and DA1.
QUERY = b"\x1b[>4;2m\x1b[?4m\x1b[?u\x1b[c"
_KITTY_REPLY = re.compile(rb"\x1b\[\?(\d+)u")
_MODIFY_REPLY = re.compile(rb"\x1b\[>4;(\d+)m")
_DA1_REPLY = re.compile(rb"\x1b\[\?[\d;]*c")

_TMUX_KEYS = {
    "space": "space",
    "enter": "enter",
    "escape": "escape",
    "tab": "tab",
    "bspace": "backspace",
    "dc": "delete",
    "ic": "insert",
    "home": "home",
    "end": "end",
    "ppage": "pageUp",
    "pageup": "pageUp",
    "pgup": "pageUp",
    "npage": "pageDown",
    "pagedown": "pageDown",
    "pgdn": "pageDown",
    "up": "up",
    "down": "down",
    "left": "left",
    "right": "right",
}
_TMUX_MODIFIERS = {"C": "ctrl", "M": "alt", "S": "shift"}


def tmux_key_id(name: str) -> str | None:
    """Our key id for a tmux key name (``C-b`` → ``ctrl+b``, ``C-M-Space`` → ``ctrl+alt+space``,
    ``^A`` → ``ctrl+a``); None for ``None`` or a key our syntax has no name for.
    """
    text = name.strip()
    if not text or text == "None":
        return None
    mods: list[str] = []
    if text.startswith("^") and len(text) == 2:
        mods, text = ["ctrl"], text[1].lower()
    while len(text) > 2 and text[1] == "-" and text[0] in _TMUX_MODIFIERS:
        mods.append(_TMUX_MODIFIERS[text[0]])
        text = text[2:]
    key = _TMUX_KEYS.get(text.lower(), text.lower() if len(text) > 1 else text)
    if len(key) == 1 and key.isupper():
        key = key.lower()
        mods.append("shift")
    try:
        return canonical("+".join((*mods, key)))
    except KeySyntaxError:
        return None


def _tmux(*args: str, env: Mapping[str, str]) -> str | None:
    try:
        done = subprocess.run(
            ["tmux", *args],
            capture_output=True,
            text=True,
            timeout=2,
            env=dict(env),
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _tmux_server_option(name: str, env: Mapping[str, str]) -> str | None:
    """A server option (``-s``), or the global one of the same name in builds that have it so."""
    return _tmux("show-options", "-sv", name, env=env) or _tmux(
        "show-options", "-gv", name, env=env
    )


def _tmux_options(env: Mapping[str, str]) -> tuple[str | None, str | None, tuple[str, ...]]:
    """The ``extended-keys`` of tmux (3.2+), its ``extended-keys-format`` (3.5+), its prefixes."""
    extended = _tmux_server_option("extended-keys", env)
    extended_format = _tmux_server_option("extended-keys-format", env)
    prefixes: list[str] = []
    for option in ("prefix", "prefix2"):
        key = tmux_key_id(_tmux("show-options", "-gv", option, env=env) or "None")
        if key is not None:
            prefixes.append(key)
    return extended or None, extended_format or None, tuple(prefixes)


def _program(env: Mapping[str, str]) -> str | None:
    if env.get("WT_SESSION"):
        return "windows-terminal"
    if env.get("KITTY_WINDOW_ID"):
        return "kitty"
    program = env.get("TERM_PROGRAM", "")
    return program.lower() or None


def parse_replies(data: bytes) -> tuple[bool, int | None, bool]:
    """(Kitty protocol answered, modifyOtherKeys level answered or None, DA1 seen) in ``data``."""
    kitty = _KITTY_REPLY.search(data) is not None
    level = _MODIFY_REPLY.search(data)
    return kitty, None if level is None else int(level[1]), _DA1_REPLY.search(data) is not None


def query_terminal(fd_in: int, fd_out: int, timeout: float) -> tuple[Encoding, bytes]:
    """Ask the terminal (already in raw mode) which key encodings it speaks.

    Returns the encoding and every byte read (the caller may show them). Waits until the DA1
    answer arrives or ``timeout`` seconds pass; a terminal that answers neither query is legacy.
    modifyOtherKeys is left at level 2 (the caller resets it with ``CSI > 4 ; 0 m``).
    """
    os.write(fd_out, QUERY)
    data = b""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd_in], [], [], left)
        if not ready:
            break
        chunk = os.read(fd_in, 1024)
        if not chunk:
            break
        data += chunk
        if parse_replies(data)[2]:
            break
    kitty, level, _ = parse_replies(data)
    if kitty:
        return "kitty", data
    if level:
        return "modifyOtherKeys", data
    return "legacy", data


def detect(env: Mapping[str, str], encoding: Encoding = "unknown") -> Terminal:
    """The :class:`Terminal` for ``env``; ``encoding`` is what the terminal answered."""
    tmux = bool(env.get("TMUX"))
    extended, extended_format, prefixes = _tmux_options(env) if tmux else (None, None, ())
    return Terminal(
        encoding,
        tmux=tmux,
        tmux_extended_keys=extended,
        tmux_extended_format=extended_format,
        tmux_prefixes=prefixes,
        screen=bool(env.get("STY")),
        program=_program(env),
    )
