"""Turning the paths a model writes into absolute paths.

Models paste paths from chat (``@src/app.py``), from macOS screenshots (``Screenshot 2024-01-01 at
10.00.00 AM.png`` whose real name has a narrow no-break space before ``AM``) and with exotic spaces;
these helpers undo that the way the reference does.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from collections.abc import Awaitable, Callable

__all__ = [
    "expand_path",
    "read_path_candidates",
    "resolve_read_path",
    "resolve_to_cwd",
    "to_posix",
]

# U+00A0 no-break space, U+2000-U+200A typographic spaces, U+202F narrow no-break space,
# U+205F medium mathematical space, U+3000 ideographic space.
_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)
_NARROW_NO_BREAK_SPACE = "\u202f"


def expand_path(path: str, home: str | None = None) -> str:
    """Strip one leading ``@``, map Unicode spaces to a plain space and expand ``~``.

    :param home: the home directory to expand ``~`` to (default: the user's home)
    """
    path = path.removeprefix("@")
    path = _UNICODE_SPACES.sub(" ", path)
    if path == "~" or path.startswith("~/"):
        base = home if home is not None else os.path.expanduser("~")
        return base if path == "~" else base + path[1:]
    return path


def resolve_to_cwd(path: str, cwd: str | os.PathLike[str], home: str | None = None) -> str:
    """The absolute form of ``path``: relative paths are joined to ``cwd`` and normalised,
    absolute ones are kept as written (like the reference, so messages echo the user's path).
    """
    expanded = expand_path(path, home)
    if posixpath.isabs(expanded):
        return expanded
    return posixpath.normpath(posixpath.join(os.fspath(cwd), expanded))


def to_posix(path: str) -> str:
    """``path`` with the platform separator replaced by ``/`` (output paths are always POSIX)."""
    return path.replace(os.sep, "/") if os.sep != "/" else path


def read_path_candidates(
    path: str, cwd: str | os.PathLike[str], home: str | None = None
) -> list[str]:
    """The absolute path, then the macOS variants tried when it does not exist, in order.

    Variants: a narrow no-break space before ``AM.``/``PM.`` (screenshot names), NFD (how macOS
    stores names), a curly apostrophe U+2019 for ``'`` (macOS's French "Capture d'écran" has
    one), and NFD plus curly.
    """
    resolved = resolve_to_cwd(path, cwd, home)
    nfd = unicodedata.normalize("NFD", resolved)
    variants = [
        _AM_PM.sub(lambda m: f"{_NARROW_NO_BREAK_SPACE}{m.group(1)}.", resolved),
        nfd,
        resolved.replace("'", "\u2019"),
        nfd.replace("'", "\u2019"),
    ]
    candidates = [resolved]
    for variant in variants:
        if variant not in candidates:
            candidates.append(variant)
    return candidates


async def resolve_read_path(
    path: str,
    cwd: str | os.PathLike[str],
    exists: Callable[[str], Awaitable[bool]],
    home: str | None = None,
) -> str:
    """The first of :func:`read_path_candidates` that ``exists``; the plain resolution otherwise.

    :param exists: an existence check, normally ``backend.exists``
    """
    candidates = read_path_candidates(path, cwd, home)
    for candidate in candidates:
        if await exists(candidate):
            return candidate
    return candidates[0]
