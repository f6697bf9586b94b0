"""Reading and writing the JSON files under the agent and project directories.

Reading turns every way a file can be wrong into a :class:`ConfigError` that names the file (and
the line and column for a syntax error), because the user has to go and fix it by hand. Writing is
atomic: a crash or a full disk never leaves a half-written ``settings.json`` or ``trust.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import NoReturn

from knightcode._errors import ConfigError


def _reject_constant(name: str) -> NoReturn:
    # Python's json accepts NaN/Infinity, which no other JSON reader does; a settings file that
    # only works here would be a trap.
    raise ValueError(f"{name} is not valid JSON")


def read_json_object(path: Path) -> dict[str, object] | None:
    """The JSON object stored in ``path``, or None when the file does not exist.

    An empty (or whitespace-only) file counts as ``{}`` so that ``touch settings.json`` works.

    :raises ConfigError: the file cannot be read, is not UTF-8, is not valid JSON (the message
        gives line and column) or holds something other than a JSON object
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        # utf-8-sig: editors on Windows like to prepend a BOM, which is harmless here.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 (byte {exc.start})") from exc
    if not text.strip():
        return {}
    data: object
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except ValueError as exc:
        raise ConfigError(f"{path}: invalid JSON: {exc}") from exc
    if not isinstance(data, dict):
        kind = "an array" if isinstance(data, list) else "a single value"
        raise ConfigError(f"{path}: must be a JSON object ({{...}}), but it holds {kind}")
    return data


def write_json_atomic(path: Path, data: object, mode: int = 0o644) -> None:
    """Write ``data`` as pretty JSON to ``path`` so that readers see the old or the new file.

    Parent directories are created. The text goes to a temporary file in the same directory,
    is flushed to disk, gets ``mode`` and then replaces ``path`` in one rename.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
            # chmod before the rename: a 0600 file (trust.json) is never visible with laxer bits.
            os.fchmod(handle.fileno(), mode)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
