"""Context files: the ``AGENTS.md``-style instructions that go into the system prompt.

They are looked for in the agent directory (instructions for every project) and then in every
directory from the filesystem root down to the working directory, so a file applies wherever
knightcode runs at or below it. They are separate from ``.knightcode/`` and need no trust: they
are plain instructions, the same ones other coding agents read.
"""

from __future__ import annotations

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


def discover_context_files(agent_dir: Path, cwd: Path) -> list[ContextFile]:
    """The context files that apply in ``cwd``, in prompt order.

    At most one file per directory: ``AGENTS.override.md`` when present (it replaces the
    ``AGENTS.md``/``CLAUDE.md`` of its own directory only), else the first of ``AGENTS.md``,
    ``AGENTS.MD``, ``CLAUDE.md``, ``CLAUDE.MD``. A file reached twice (the agent directory is
    also an ancestor, or a symlink) is used once, at its first place. Unreadable files are
    skipped: a stray permission problem in ``/`` must not stop the agent.
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
        try:
            content = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        seen.add(resolved)
        found.append(ContextFile(path.absolute(), content))
    return found
