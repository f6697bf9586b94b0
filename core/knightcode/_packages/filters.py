"""A package's resources one by one, and the filters of a settings entry that enable them.

The object form of a ``packages`` entry names, per kind, a list of filters over the package's
resources (the reference's rules):

- a plain entry includes what it names: a glob (``skills/*``, ``**/review``), or a path
  relative to the package, which includes that resource and everything under it; when a kind
  has no plain entry, all of its resources are included;
- ``!pattern`` excludes what a glob or path matches;
- ``+path`` force-includes one exact resource, even if excluded;
- ``-path`` force-excludes one exact resource, even if included or force-included;
- ``[]`` turns the kind off.

A pattern is tried against a resource's path relative to the package, its name, and for a
``SKILL.md`` its folder (``skills/review``), which is how ``knightcode config enable/disable``
writes them. Globs: ``*`` and ``?`` stay within one path segment, ``**`` crosses them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SKILL_FILE = "SKILL.md"
OVERRIDES = ("!", "+", "-")


@dataclass(frozen=True)
class Resource:
    """One resource of a package.

    :param path: the file loaders read (a ``SKILL.md`` or ``*.md``, an extension's ``.py`` file
        or package folder, a theme's ``.json``)
    :param rel: its path relative to the package (posix), a ``SKILL.md``'s folder for a skill
        in a folder: what filters and the CLI call it
    :param name: the skill folder's or file's name without its suffix
    """

    path: Path
    rel: str
    name: str

    @property
    def keys(self) -> tuple[str, ...]:
        """What a glob is matched against."""
        file_rel = f"{self.rel}/{SKILL_FILE}" if self.path.name == SKILL_FILE else self.rel
        return (self.rel, file_rel, self.name, self.path.name)


def resource_at(path: Path, root: Path) -> Resource:
    """The :class:`Resource` of ``path`` inside the package at ``root``."""
    shown = path.parent if path.name == SKILL_FILE else path
    rel = shown.relative_to(root).as_posix() if shown.is_relative_to(root) else shown.as_posix()
    return Resource(path, rel, Path(shown.name).stem)


def is_pattern(entry: str) -> bool:
    """An override or a glob, as opposed to a plain path."""
    return entry.startswith(OVERRIDES) or "*" in entry or "?" in entry


def _normal(entry: str) -> str:
    return entry.removeprefix("./").rstrip("/")


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    parts = re.split(r"(\*\*/?|\*|\?)", pattern)
    table = {"**": ".*", "**/": "(?:.*/)?", "*": "[^/]*", "?": "[^/]"}
    return re.compile("".join(table.get(part, re.escape(part)) for part in parts))


def matches(resource: Resource, pattern: str) -> bool:
    """A glob matches one of the resource's keys; a plain path names it or a folder above it."""
    pattern = _normal(pattern)
    if "*" in pattern or "?" in pattern:
        regex = _glob(pattern)
        return any(regex.fullmatch(key) for key in resource.keys)
    return pattern in resource.keys or resource.rel.startswith(f"{pattern}/")


def matches_exactly(resource: Resource, path: str) -> bool:
    """``+path``/``-path`` name one resource by its relative path (or its file's)."""
    path = _normal(path)
    return path in resource.keys[:2] or path == str(resource.path)


def enabled(resources: Sequence[Resource], filters: Sequence[str]) -> list[bool]:
    """Which of ``resources`` the filter list of their kind enables (``[]``: none)."""
    if not filters:
        return [False] * len(resources)
    includes = [item for item in filters if not item.startswith(OVERRIDES)]
    excludes = [item[1:] for item in filters if item.startswith("!")]
    forced_in = [item[1:] for item in filters if item.startswith("+")]
    forced_out = [item[1:] for item in filters if item.startswith("-")]
    result = []
    for resource in resources:
        on = not includes or any(matches(resource, item) for item in includes)
        on = on and not any(matches(resource, item) for item in excludes)
        on = on or any(matches_exactly(resource, item) for item in forced_in)
        on = on and not any(matches_exactly(resource, item) for item in forced_out)
        result.append(on)
    return result


def with_override(filters: Sequence[str] | None, rel: str, on: bool) -> list[str]:
    """The filter list after enabling (``+rel``) or disabling (``-rel``) one resource.

    Earlier ``+``/``-`` entries for ``rel`` are dropped; plain and ``!`` entries stay, so the
    other resources keep their state. A kind that was off (``[]``) gets ``rel`` as its one
    include, since ``+rel`` alone would include everything.
    """
    if filters is not None and not filters:
        return [rel] if on else []
    kept = [
        item
        for item in filters or ()
        if not (item.startswith(("+", "-")) and _normal(item[1:]) == rel)
    ]
    return [*kept, f"+{rel}" if on else f"-{rel}"]
