"""The project's files for ``@`` references: listed once, ranked by a fuzzy match per keystroke.

The list comes from ``rg --files`` because it is fast and honours ``.gitignore`` (and ``.ignore``)
the way the user's other tools do; without ripgrep, ``git ls-files`` gives the same answer inside
a repository, and a bounded walk that skips hidden and well-known build directories gives a usable
one elsewhere.  Listing a large tree takes a while, so :meth:`FileIndex.load` is meant to run in a
worker thread; searching the cached list is cheap enough for every keystroke.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

__all__ = ["MAX_FILES", "FileIndex", "fuzzy_score", "list_project_files", "rank_paths"]

MAX_FILES = 100_000
"""Files kept from the listing: enough for big monorepos, bounded for the home directory."""

_LIST_TIMEOUT = 20.0
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "target", "dist", "build", "venv"})
"""Directories the fallback walk skips (besides hidden ones): what ``.gitignore`` usually lists."""


def _run_lister(argv: list[str], root: Path, *, empty_code: int | None = None) -> list[str] | None:
    """The NUL-separated names ``argv`` prints, or None when it failed (so the next way is tried).

    :param empty_code: an exit code that means "no files" rather than failure (rg's 1)
    """
    try:
        done = subprocess.run(
            argv, cwd=root, capture_output=True, timeout=_LIST_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode == empty_code and not done.stdout:
        return []
    if done.returncode != 0:
        return None
    names = done.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    return [name.removeprefix("./") for name in names if name][:MAX_FILES]


def _walk(root: Path) -> list[str]:
    found: list[str] = []
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
        rel = os.path.relpath(top, root)
        for name in sorted(files):
            if name.startswith("."):
                continue
            found.append(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
            if len(found) >= MAX_FILES:
                return found
    return found


def find_rg() -> str | None:
    """The ``rg`` the tools use: the ripgrep wheel's, beside this interpreter (its ``bin/`` is
    often not on PATH), else one on PATH.
    """
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


def list_project_files(root: Path, *, rg: str | None = None, git: str | None = None) -> list[str]:
    """The files under ``root``, relative, ``/``-separated, ``.gitignore`` honoured when possible.

    :param rg: the ripgrep executable; :func:`find_rg` when None (``""`` skips it)
    :param git: the git executable; looked up on PATH when None (``""`` skips it)
    """
    rg_path = find_rg() if rg is None else rg
    if rg_path:
        listed = _run_lister([rg_path, "--files", "--null"], root, empty_code=1)
        if listed is not None:
            return listed
    git_path = shutil.which("git") if git is None else git
    if git_path:
        argv = [git_path, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        listed = _run_lister(argv, root)
        if listed is not None:
            # Hidden paths are left out, as ripgrep does; deleted files stay listed by git.
            return [
                name
                for name in listed
                if not any(part.startswith(".") for part in name.split("/"))
                and (root / name).is_file()
            ]
    return _walk(root)


def _with_directories(files: list[str]) -> list[str]:
    """The files plus every directory holding one (``src/``), so that ``@src`` finds the folder."""
    dirs: dict[str, None] = {}
    for name in files:
        parts = name.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            dirs.setdefault("/".join(parts[:depth]) + "/")
    return [*dirs, *files]


_BOUNDARY = "/_-. "


def _match(query: str, text: str) -> float | None:
    """Score ``query`` as a subsequence of ``text`` (both lower case), or None if it is not one.

    Each matched character scores 1, more when it continues a run of matched characters or starts
    a word (after ``/``, ``_``, ``-``, ``.``, a space, or at the start).  The first character is
    tried at a few positions because the leftmost one is often not the best (``@ed`` in
    ``src/render/editor.py`` should hit ``editor``, not ``render``).
    """
    best: float | None = None
    start = text.find(query[0])
    tries = 0
    while start != -1 and tries < 8:
        tries += 1
        score = 0.0
        pos = start
        previous = -2
        for char in query:
            pos = text.find(char, pos)
            if pos == -1:
                return best
            score += 1.0
            if pos == previous + 1:
                score += 2.0
            if pos == 0 or text[pos - 1] in _BOUNDARY:
                score += 1.5
            previous = pos
            pos += 1
        if best is None or score > best:
            best = score
        start = text.find(query[0], start + 1)
    return best


def fuzzy_score(query: str, path: str) -> float | None:
    """How well ``query`` matches ``path`` (higher is better), or None when it does not.

    A match inside the basename beats one spread over the directories; an exact or prefix
    basename match beats both; shorter paths win ties.
    """
    if not query:
        return -0.01 * len(path)
    q = query.lower()
    p = path.lower()
    trimmed = p.rstrip("/")
    base = trimmed[trimmed.rfind("/") + 1 :]
    score: float | None = None
    if "/" not in q:
        in_base = _match(q, base)
        if in_base is not None:
            score = in_base * 2 + 10
            if base == q:
                score += 40
            elif base.startswith(q):
                score += 20
    whole = _match(q, p)
    if whole is not None and (score is None or whole > score):
        score = whole
    if score is None:
        return None
    return score - 0.01 * len(path)


def rank_paths(query: str, paths: list[str], limit: int = 50) -> list[str]:
    """The best ``limit`` of ``paths`` for ``query``; with an empty query the shallowest first."""
    if not query:
        return sorted(paths, key=lambda p: (p.rstrip("/").count("/"), p))[:limit]
    q = query.lower()
    scored: list[tuple[float, str]] = []
    for path in paths:
        # A cheap subsequence test first: most paths do not match at all.
        it = iter(path.lower())
        if not all(char in it for char in q):
            continue
        score = fuzzy_score(query, path)
        if score is not None:
            scored.append((score, path))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [path for _, path in scored[:limit]]


class FileIndex:
    """The project's files and directories, listed once on first use.

    :param root: the project directory (the session's cwd)
    """

    def __init__(self, root: Path, *, rg: str | None = None, git: str | None = None) -> None:
        self.root = root
        self._rg = rg
        self._git = git
        self._paths: list[str] | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """True once the listing is done (``search`` answers from it)."""
        return self._paths is not None

    def load(self) -> None:
        """List the files (blocking; run it in a worker thread). Later calls do nothing."""
        with self._lock:
            if self._paths is None:
                files = list_project_files(self.root, rg=self._rg, git=self._git)
                self._paths = _with_directories(files)

    def invalidate(self) -> None:
        """Forget the listing, e.g. after ``/reload``: the next ``@`` lists again."""
        with self._lock:
            self._paths = None

    def search(self, query: str, limit: int = 50) -> list[str]:
        """The paths matching ``query`` best first (directories end with ``/``); ``[]`` until
        :meth:`load` finished.
        """
        paths = self._paths
        return [] if paths is None else rank_paths(query, paths, limit)
