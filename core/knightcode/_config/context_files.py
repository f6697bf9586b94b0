"""Context files: the ``AGENTS.md``-style instructions that go into the system prompt.

They are looked for in the agent directory (instructions for every project) and then in every
directory from the filesystem root down to the working directory, so a file applies wherever
knightcode runs at or below it. They are separate from ``.knightcode/`` and need no trust: they
are plain instructions, the same ones other coding agents read.

Because every ancestor counts, a file someone else can write would steer every run below it (an
``AGENTS.md`` dropped into a shared temporary directory, say). So a file is skipped, with a
warning, when someone other than the user can change it: it is world-writable, it (or the
symlink that names it) is owned by another user, or its directory is world-writable without the
sticky bit, so anyone can replace it. Files owned by root are accepted — root can change
anything on the machine anyway, and ``/etc``-style system directories are root's. Group-writable
files are accepted: groups are how people share a checkout on purpose.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

OVERRIDE_NAME = "AGENTS.override.md"
CANDIDATE_NAMES = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
"""Looked for in this order when a directory has no override; the first one found is used."""


@dataclass
class ContextFile:
    """One context file as it goes into the prompt.

    :param path: absolute path, as shown under ``# Project Context``
    :param content: its text
    """

    path: Path
    content: str


def _pick(directory: Path) -> Path | None:
    """The context file of one directory: its override, else the first candidate present."""
    for name in (OVERRIDE_NAME, *CANDIDATE_NAMES):
        path = directory / name
        if path.is_file():
            return path
    return None


def _search_dirs(agent_dir: Path, cwd: Path) -> list[Path]:
    """The agent directory, then the filesystem root, then each directory down to ``cwd``."""
    absolute = cwd.absolute()
    return [agent_dir, *reversed(absolute.parents), absolute]


def _foreign_writer(path: Path) -> str | None:
    """Why someone other than the user could have written ``path``, or None when nobody can.

    Only POSIX has the owners and modes to judge; elsewhere every file is accepted.
    """
    if not hasattr(os, "geteuid"):
        return None
    trusted_owners = {os.geteuid(), 0}
    try:
        entry, target, directory = path.lstat(), path.stat(), path.parent.stat()
    except OSError:
        return None  # gone or unreadable: reading it will say so
    if target.st_mode & stat.S_IWOTH:
        return "it is world-writable"
    for info in (entry, target):
        if info.st_uid not in trusted_owners:
            return f"it is owned by another user (uid {info.st_uid})"
    if directory.st_mode & stat.S_IWOTH and not directory.st_mode & stat.S_ISVTX:
        return "its directory is world-writable, so anyone can replace it"
    return None


def discover_context_files(
    agent_dir: Path, cwd: Path, warnings: list[str] | None = None
) -> list[ContextFile]:
    """The context files that apply in ``cwd``, in prompt order.

    At most one file per directory: ``AGENTS.override.md`` when present (it replaces the
    ``AGENTS.md``/``CLAUDE.md`` of its own directory only), else the first of ``AGENTS.md``,
    ``AGENTS.MD``, ``CLAUDE.md``, ``CLAUDE.MD``. A file reached twice (the agent directory is
    also an ancestor, or a symlink) is used once, at its first place. Unreadable files are
    skipped: a stray permission problem in ``/`` must not stop the agent. A file another user
    could have written is skipped too (see the module docstring), with one line in ``warnings``.
    """
    found: list[ContextFile] = []
    seen: set[Path] = set()
    for directory in _search_dirs(agent_dir, cwd):
        path = _pick(directory)
        if path is None:
            continue
        resolved = path.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        problem = _foreign_writer(path)
        if problem is not None:
            if warnings is not None:
                warnings.append(f"context file {path.absolute()} skipped: {problem}")
            continue
        try:
            content = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        found.append(ContextFile(path.absolute(), content))
    return found
