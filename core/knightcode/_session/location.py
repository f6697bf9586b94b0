"""Where session files live and what they are called.

Default: ``<agent-dir>/sessions/--<encoded cwd>--/<timestamp>_<session id>.jsonl``, the
reference's layout, so sessions can move between the two tools. The directory can be overridden,
in order of precedence, by ``--session-dir``, the ``KNIGHTCODE_CODING_AGENT_SESSION_DIR``
environment variable, and the ``sessionDir`` setting.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from knightcode._session.ids import file_timestamp

__all__ = [
    "SESSION_DIR_ENV",
    "default_session_dir",
    "encode_cwd",
    "resolve_session_dir",
    "session_dir_problem",
    "session_file_name",
    "sessions_root",
]

SESSION_DIR_ENV = "KNIGHTCODE_CODING_AGENT_SESSION_DIR"

_SEPARATORS = re.compile(r"[/\\:]")


def encode_cwd(cwd: str | os.PathLike[str]) -> str:
    r"""The directory name for a working directory: ``/home/u/proj`` → ``--home-u-proj--``.

    One leading ``/`` or ``\`` is dropped, then every ``/``, ``\`` and ``:`` becomes ``-``.
    """
    text = os.fspath(cwd)
    if text[:1] in ("/", "\\"):
        text = text[1:]
    return f"--{_SEPARATORS.sub('-', text)}--"


def sessions_root(agent_dir: str | os.PathLike[str]) -> Path:
    """``<agent-dir>/sessions``: the parent of every per-project session directory."""
    return Path(agent_dir) / "sessions"


def default_session_dir(cwd: str | os.PathLike[str], agent_dir: str | os.PathLike[str]) -> Path:
    """``<agent-dir>/sessions/--<encoded cwd>--`` (not created here)."""
    return sessions_root(agent_dir) / encode_cwd(cwd)


def session_file_name(timestamp: str, session_id: str) -> str:
    """``2026-11-29T16-55-23-723Z_<id>.jsonl`` for an ISO ``timestamp`` and a session id."""
    return f"{file_timestamp(timestamp)}_{session_id}.jsonl"


def _absolute(value: str | os.PathLike[str], base: Path) -> Path:
    path = Path(os.path.expanduser(os.fspath(value)))
    return path if path.is_absolute() else base / path


def resolve_session_dir(
    cwd: str | os.PathLike[str],
    agent_dir: str | os.PathLike[str],
    *,
    cli_dir: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] = os.environ,
    settings_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """The session directory for ``cwd``, with the documented precedence.

    ``--session-dir`` (``cli_dir``) > ``KNIGHTCODE_CODING_AGENT_SESSION_DIR`` (from ``env``) >
    settings ``sessionDir`` (``settings_dir``, already resolved against its settings file by the
    config layer) > the default. An override names the directory itself (no per-cwd
    subdirectory is added). ``~`` is expanded; a relative override is relative to ``cwd``.
    Empty values count as unset. Nothing is created.
    """
    base = Path(cwd)
    for candidate in (cli_dir, env.get(SESSION_DIR_ENV), settings_dir):
        if candidate is not None and os.fspath(candidate) != "":
            return _absolute(candidate, base)
    return default_session_dir(cwd, agent_dir)


def session_dir_problem(path: Path) -> str | None:
    """Why ``path`` cannot be (or become) a session directory, or ``None``.

    Sessions are written lazily, after the first answer: a directory that is a file would
    otherwise be found only then. Permissions are not checked here (a write that fails is
    reported when it happens, and the answer is still shown).
    """
    current = path
    while True:
        try:
            if current.is_dir():
                return None
            if current.exists() or current.is_symlink():
                break
        except OSError:
            break
        if current.parent == current:
            return None
        current = current.parent
    if current == path:
        return f"session directory {path} is not a directory"
    return f"session directory {path} cannot be created: {current} is not a directory"
