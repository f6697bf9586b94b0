"""The scratchpad: where a large tool result is kept whole while the context gets its head.

A 2 MB page in the context costs the whole window and says little the model needs. So a result
longer than ``inline_chars`` is written whole to a file in the session's scratchpad directory,
and the tool returns its first ``head_chars`` characters, the total size and the file's path;
the model reads or greps the rest with the ordinary ``read`` and ``grep`` tools.

The file is written through the execution backend at a path the backend names (under a sandbox,
a ``/workspace/...`` path), so the model's own tools can open the very path it is given.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from knightcode import ExecutionBackend, ToolContext

__all__ = [
    "ScratchpadSettings",
    "Spilled",
    "beside_session_file",
    "default_scratchpad_dir",
    "format_size",
    "head_of",
    "keep_or_spill",
    "remove_scratchpads",
    "session_scratchpads",
    "workspace_ignore_file",
]

_SLUG_CHARS = re.compile(r"[^A-Za-z0-9._-]+")  # file-name safety, not HTML parsing


@dataclass(frozen=True)
class ScratchpadSettings:
    """When and where big results go (``tools.json`` ``scratchpad``).

    :param inline_chars: results up to this many characters go to the context whole
    :param head_chars: how much of a bigger result the context gets
    :param directory: the scratchpad directory as the backend names it (None: the default,
        :func:`default_scratchpad_dir`)
    """

    inline_chars: int = 40_000
    head_chars: int = 8_000
    directory: str | None = None


@dataclass(frozen=True)
class Spilled:
    """A result that went to the scratchpad: what the context gets and where the rest is."""

    text: str
    path: str
    total_chars: int
    total_bytes: int


@runtime_checkable
class _Mapped(Protocol):
    """A backend that names host paths its own way (a sandbox's ``/workspace``)."""

    def agent_path(self, host_path: str) -> str:
        """The backend's name for ``host_path``."""
        ...


_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")  # what session ids look like
_TEMP_ROOT = "knightcode-scratchpad"
WORKSPACE_ROOT = (".knightcode", "scratchpad")
"""Under a sandbox: ``<workspace>/.knightcode/scratchpad/<session id>``."""


def default_scratchpad_dir(ctx: ToolContext) -> str:
    """The session's scratchpad directory, as ``ctx.backend`` names it.

    Without a sandbox: ``<session file>.scratchpad/`` beside the session file (a temporary
    directory without a session). Under a sandbox the session directory is not mapped, so it is
    ``<workspace>/.knightcode/scratchpad/<session id>``, which the model's tools can read.
    """
    session = ctx.context.session if ctx.context is not None else None
    session_id = session.session_id if session is not None else "no-session"
    if isinstance(ctx.backend, _Mapped):
        return str(PurePosixPath(str(ctx.cwd)).joinpath(*WORKSPACE_ROOT, session_id))
    session_file = session.session_file if session is not None else None
    if session_file is not None:
        return str(beside_session_file(session_file))
    return str(PurePosixPath(tempfile.gettempdir()) / _TEMP_ROOT / session_id)


def beside_session_file(session_file: Path) -> Path:
    """The scratchpad of a saved session without a sandbox: ``<file stem>.scratchpad``."""
    return session_file.with_name(session_file.stem + ".scratchpad")


def workspace_ignore_file(ctx: ToolContext) -> str | None:
    """Under a sandbox, the ``.gitignore`` that keeps the workspace's scratchpads out of git
    (they live in the project); None otherwise.
    """
    if not isinstance(ctx.backend, _Mapped):
        return None
    return str(PurePosixPath(str(ctx.cwd)).joinpath(*WORKSPACE_ROOT, ".gitignore"))


def session_scratchpads(session_file: Path | None, session_id: object, cwd: object) -> list[Path]:
    """Every host directory a session's default scratchpad can be in, for removal with the
    session. ``session_id`` and ``cwd`` may come from a session file anyone could have written:
    an id that is not a plain id, or a ``cwd`` that is not an absolute path, yields nothing
    built from it (no ``../`` can reach outside the scratchpad roots).
    """
    found: list[Path] = []
    if session_file is not None:
        found.append(beside_session_file(session_file))
    if isinstance(session_id, str) and _SAFE_ID.fullmatch(session_id):
        if session_file is None:
            found.append(Path(tempfile.gettempdir()) / _TEMP_ROOT / session_id)
        if isinstance(cwd, str) and Path(cwd).is_absolute():
            found.append(Path(cwd).joinpath(*WORKSPACE_ROOT, session_id))
    return found


def remove_scratchpads(directories: list[Path]) -> list[Path]:
    """Remove the directories that exist (not following a link in their place); returns the
    ones removed. A failure to remove one is left alone: it is a cache, not the session.
    """
    removed: list[Path] = []
    for directory in directories:
        if directory.is_symlink() or not directory.is_dir():
            continue
        shutil.rmtree(directory, ignore_errors=True)
        if not directory.exists():
            removed.append(directory)
    return removed


def format_size(size: int) -> str:
    """``size`` bytes as ``512 B``, ``12.3 KB`` or ``4.5 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def head_of(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, cut at a line end when one is near."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    if cut < limit // 2:
        cut = limit
    return text[:cut]


def _file_name(label: str, text: str, suffix: str) -> str:
    """A readable, unique file name: a slug of ``label`` and a digest of the content."""
    slug = _SLUG_CHARS.sub("-", label).strip("-._")[:80] or "result"
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:10]
    return f"{slug}-{digest}{suffix}"


async def keep_or_spill(
    text: str,
    *,
    label: str,
    backend: ExecutionBackend,
    directory: str,
    settings: ScratchpadSettings,
    suffix: str = ".md",
    ignore_file: str | None = None,
) -> Spilled | None:
    """Save ``text`` whole to the scratchpad when it is too long for the context.

    :param label: names the file (a URL, say)
    :param ignore_file: a ``.gitignore`` to write (``*``) with the file, for a scratchpad
        inside the project
    :returns: None when ``text`` fits ``settings.inline_chars`` (nothing is written), else the
        head for the context and the saved file
    """
    if len(text) <= settings.inline_chars:
        return None
    data = text.encode("utf-8")
    path = str(PurePosixPath(directory) / _file_name(label, text, suffix))
    await backend.write_file(path, data)
    if ignore_file is not None:
        await backend.write_file(ignore_file, b"*\n")
    head = head_of(text, settings.head_chars)
    note = (
        f"\n\n[Showing the first {len(head):,} of {len(text):,} characters "
        f"({format_size(len(data))}). The whole content is saved at {path} — read it with "
        "`read` (offset/limit) or search it with `grep` instead of fetching again.]"
    )
    return Spilled(head + note, path, len(text), len(data))
