"""Copying to the clipboard: through the terminal (OSC 52) and, where one is at hand, the
system's clipboard program — OSC 52 reaches the clipboard over SSH but some terminals ignore it,
and a clipboard program works locally whatever the terminal does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

__all__ = ["clipboard_command", "copy_with_program", "read_clipboard"]

TIMEOUT_SECONDS = 2.0


def clipboard_command(environ: dict[str, str] | None = None) -> list[str] | None:
    """The clipboard program of this desktop (pbcopy, wl-copy, xclip, xsel), or None."""
    env = os.environ if environ is None else environ
    candidates: list[list[str]] = []
    if sys.platform == "darwin":
        candidates.append(["pbcopy"])
    if env.get("WAYLAND_DISPLAY"):
        candidates.append(["wl-copy"])
    if env.get("DISPLAY"):
        candidates += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    for command in candidates:
        if shutil.which(command[0]) is not None:
            return command
    return None


def copy_with_program(text: str) -> str | None:
    """Put ``text`` on the clipboard with the desktop's program; its name, or None when there
    is none or it failed (the caller has sent OSC 52 anyway).
    """
    command = clipboard_command()
    if command is None:
        return None
    try:
        done = subprocess.run(
            command,
            input=text.encode(),
            capture_output=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return command[0] if done.returncode == 0 else None


IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _run(command: list[str]) -> bytes | None:
    try:
        done = subprocess.run(command, capture_output=True, timeout=TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def read_clipboard(environ: dict[str, str] | None = None) -> tuple[str, bytes] | None:
    """What the clipboard holds, preferring an image: ``(mime type, data)``, with
    ``text/plain`` for text; None when no clipboard program can read it.
    """
    env = os.environ if environ is None else environ
    if env.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        listed = _run(["wl-paste", "--list-types"]) or b""
        types = listed.decode(errors="replace").split()
        for mime in IMAGE_TYPES:
            if mime in types and (data := _run(["wl-paste", "--type", mime])):
                return mime, data
        text = _run(["wl-paste", "--no-newline"])
        return ("text/plain", text) if text is not None else None
    if env.get("DISPLAY") and shutil.which("xclip"):
        listed = _run(["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"]) or b""
        types = listed.decode(errors="replace").split()
        for mime in IMAGE_TYPES:
            command = ["xclip", "-selection", "clipboard", "-t", mime, "-o"]
            if mime in types and (data := _run(command)):
                return mime, data
        text = _run(["xclip", "-selection", "clipboard", "-o"])
        return ("text/plain", text) if text is not None else None
    if sys.platform == "darwin" and shutil.which("pbpaste"):
        text = _run(["pbpaste"])
        return ("text/plain", text) if text is not None else None
    return None
