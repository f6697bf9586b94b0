"""Reading and writing the JSON files under the agent and project directories.

Reading turns every way a file can be wrong into a :class:`ConfigError` that names the file (and
the line and column for a syntax error), because the user has to go and fix it by hand. That
includes files no hand would write but a mistake or a hostile repository can produce: anything
bigger than :data:`MAX_CONFIG_BYTES`, nested deeper than :data:`MAX_CONFIG_DEPTH`, or not a regular
file at all (a directory, a FIFO that would block the read forever, ``/dev/zero``).

Writing is atomic: a crash or a full disk never leaves a half-written ``settings.json`` or
``trust.json``; a write that fails (no space, no permission) is a :class:`ConfigWriteError` that
names the file, reported on one line.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import NoReturn

from knightcode._errors import ConfigError, KnightcodeError

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_DEPTH",
    "ConfigWriteError",
    "read_json_object",
    "write_json_atomic",
]

MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""The largest configuration file read. The biggest real one is a models.json describing many
providers, a few hundred KB at most (1,000 models at ~300 bytes each); 4 MiB leaves ten times
that and still parses in milliseconds, while a runaway or hostile file cannot cost more."""

MAX_CONFIG_DEPTH = 64
"""The deepest nesting of objects and arrays accepted. knightcode's own files nest at most six
levels (``providers.<p>.models[i].compat.<key>``), plugin settings a few more; far below the
~1,000 levels at which Python's parser gives up with a ``RecursionError``."""


class ConfigWriteError(KnightcodeError, OSError):
    """A configuration file could not be written (no space, no permission …); exit status 1.

    Also an :class:`OSError`, so code that handled the bare error keeps working.
    """


def _reject_constant(name: str) -> NoReturn:
    # Python's json accepts NaN/Infinity, which no other JSON reader does; a settings file that
    # only works here would be a trap.
    raise ValueError(f"{name} is not valid JSON")


def read_json_object(path: Path) -> dict[str, object] | None:
    """The JSON object stored in ``path``, or None when the file does not exist.

    An empty (or whitespace-only) file counts as ``{}`` so that ``touch settings.json`` works.

    :raises ConfigError: the file cannot be read, is not a regular file, is larger than
        :data:`MAX_CONFIG_BYTES`, is not UTF-8, is not valid JSON (the message gives line and
        column), nests deeper than :data:`MAX_CONFIG_DEPTH` or holds something other than a
        JSON object
    """
    raw = _read_bounded(path)
    if raw is None:
        return None
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
    except RecursionError:  # deeper than the parser goes: the check below needs valid JSON
        raise ConfigError(_too_deep(path)) from None
    if _depth_exceeds(raw, MAX_CONFIG_DEPTH):
        raise ConfigError(_too_deep(path))
    if not isinstance(data, dict):
        kind = "an array" if isinstance(data, list) else "a single value"
        raise ConfigError(f"{path}: must be a JSON object ({{...}}), but it holds {kind}")
    return data


def _read_bounded(path: Path) -> bytes | None:
    """The bytes of ``path`` (None when it does not exist), refusing what is not a regular file
    or is too large before reading it: a FIFO would block forever, ``/dev/zero`` never ends.
    """
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise ConfigError(f"{path}: is a directory, not a JSON file")
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: not a regular file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(_too_big(path))
        with path.open("rb") as handle:
            # read(n) allocates n bytes up front: ask for the size seen, and only if the file
            # grew since the stat for the rest of the allowance.
            raw = handle.read(info.st_size + 1)
            if len(raw) > info.st_size:
                raw += handle.read(MAX_CONFIG_BYTES + 1 - len(raw))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(_too_big(path))
    return raw


def _too_big(path: Path) -> str:
    return f"{path}: larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MiB; not a configuration file"


def _too_deep(path: Path) -> str:
    return f"{path}: nested deeper than {MAX_CONFIG_DEPTH} levels; not a configuration file"


# Nesting is measured on the bytes once they parsed, with C-speed operations only (walking the
# parsed value in Python cost twice the parse): escapes dropped, then everything but quotes and
# brackets, then the strings, and the innermost bracket pairs are removed level by level.
_KEEP = b'"[]{}'
_DROP = bytes(byte for byte in range(256) if byte not in _KEEP)
_STRING = re.compile(rb'"[^"]*"')
_INNERMOST = re.compile(rb"\{\}|\[\]")


def _depth_exceeds(raw: bytes, limit: int) -> bool:
    """Whether the objects and arrays of ``raw`` (valid JSON) nest deeper than ``limit``."""
    if b"\\" in raw:
        # In valid JSON a backslash only occurs in a string escape: once the \\ pairs are
        # dropped, every remaining backslash starts a one-character escape, \" among them.
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Most strings hold no bracket and are left as "": dropping those pairs (or joining two
    # neighbouring strings into one) is cheap and leaves few strings for the regex.
    kept = raw.translate(None, _DROP).replace(b'""', b"")
    brackets = _STRING.sub(b"", kept) if b'"' in kept else kept
    for _ in range(limit):
        if not brackets:
            return False
        brackets = _INNERMOST.sub(b"", brackets)
    return bool(brackets)


def write_json_atomic(path: Path, data: object, mode: int = 0o644) -> None:
    """Write ``data`` as pretty JSON to ``path`` so that readers see the old or the new file.

    Parent directories are created. The text goes to a temporary file in the same directory,
    is flushed to disk, gets ``mode`` and then replaces ``path`` in one rename.

    :raises ConfigWriteError: the file (or its directory) could not be written; ``path`` is
        unchanged and no temporary file is left behind
    """
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        _write_atomic(path, text, mode)
    except OSError as exc:
        raise ConfigWriteError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _write_atomic(path: Path, text: str, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
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
