"""Editing the prompt in the user's own editor (``app.editor.external``).

The prompt is written to a private temporary file, the editor named by the ``externalEditor``
setting, ``$VISUAL`` or ``$EDITOR`` (else ``nano``) runs on it in the terminal, and the file's
text becomes the prompt.  The app suspends the UI around the call; this module only runs the
process, so it is tested with a real script as the editor.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping

__all__ = ["ExternalEditorError", "editor_command", "run_external_editor"]


class ExternalEditorError(Exception):
    """The editor could not be started or failed; the message says which and why."""


def editor_command(setting: str | None, env: Mapping[str, str]) -> list[str]:
    """The editor's argv: the setting, ``$VISUAL``, ``$EDITOR``, then ``nano``.

    Values are split as a shell would (``code --wait`` is a command and an option).
    """
    for value in (setting, env.get("VISUAL"), env.get("EDITOR")):
        if value and value.strip():
            return shlex.split(value)
    return ["nano"]


def run_external_editor(text: str, command: list[str]) -> str:
    """Let the user edit ``text`` with ``command`` and return the result.

    The file is created 0600 (the prompt may hold secrets) and removed afterwards; the one
    trailing newline editors add is dropped.

    :raises ExternalEditorError: the editor is missing, exits non-zero, or the file is unreadable
    """
    fd, name = tempfile.mkstemp(prefix="knightcode-prompt-", suffix=".md")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            done = subprocess.run([*command, name], check=False)
        except OSError as exc:
            raise ExternalEditorError(f"cannot run editor {command[0]!r}: {exc}") from exc
        if done.returncode != 0:
            raise ExternalEditorError(
                f"editor {command[0]!r} exited with status {done.returncode}; prompt unchanged"
            )
        try:
            with open(name, encoding="utf-8", errors="replace") as fh:
                edited = fh.read()
        except OSError as exc:
            raise ExternalEditorError(f"cannot read the edited prompt: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)
    return edited.removesuffix("\n")
