r"""fd-style glob patterns as regular expressions, for the ``find`` tool.

The reference runs ``fd --glob``: a pattern without ``/`` is matched against the file name, one
with ``/`` against the whole path (with ``**/`` put in front unless it starts with ``/`` or ``**``);
``*`` and ``?`` never cross ``/``; ``**`` as a whole component crosses directories; ``[...]``,
``{a,b}`` and ``\`` escapes work; matching is case-insensitive unless the pattern has an upper-case
letter ("smart case"). :func:`compile_glob` builds one multi-line regex so the whole listing is
filtered in C rather than path by path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["GlobMatcher", "compile_glob", "glob_to_regex", "type_glob"]

_NOT_SEP = r"[^/\n]"


def _class(glob: str, start: int) -> tuple[str, int] | None:
    """Translate the ``[...]`` class at ``start``; None when it is not closed."""
    i = start + 1
    negated = i < len(glob) and glob[i] in "!^"
    if negated:
        i += 1
    first = i
    while i < len(glob) and (glob[i] != "]" or i == first):
        i += 1
    if i >= len(glob):
        return None
    body = glob[first:i].replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
    # A class never matches the separator (or a newline of the listing being searched).
    return (f"[^/\\n{body}]" if negated else f"(?:(?!/)[{body}])"), i + 1


def _alternatives(glob: str, start: int) -> tuple[list[str], int] | None:
    """Split the ``{a,b}`` group at ``start`` into its alternatives; None when not closed."""
    depth, i, begin, parts = 0, start, start + 1, []
    while i < len(glob):
        char = glob[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                parts.append(glob[begin:i])
                return parts, i + 1
        elif char == "," and depth == 1:
            parts.append(glob[begin:i])
            begin = i + 1
        i += 1
    return None


def glob_to_regex(glob: str) -> str:
    """The regex (unanchored) matching what ``glob`` matches."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        char = glob[i]
        if glob.startswith("**", i):
            starts_component = i == 0 or glob[i - 1] == "/"
            ends_component = i + 2 == n or glob[i + 2] == "/"
            if starts_component and ends_component:
                if i + 2 == n:
                    out.append(".*")  # "**" alone or a trailing "/**": everything below
                    i += 2
                else:
                    out.append("(?:.*/)?")  # "**/": any number of directories, even none
                    i += 3
                continue
            out.append(_NOT_SEP + "*")  # "**" inside a component is just "*"
            i += 2
        elif char == "*":
            out.append(_NOT_SEP + "*")
            i += 1
        elif char == "?":
            out.append(_NOT_SEP)
            i += 1
        elif char == "[" and (translated := _class(glob, i)) is not None:
            out.append(translated[0])
            i = translated[1]
        elif char == "{" and (group := _alternatives(glob, i)) is not None:
            out.append("(?:" + "|".join(glob_to_regex(part) for part in group[0]) + ")")
            i = group[1]
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class GlobMatcher:
    """A compiled find pattern.

    :param regex: matches whole lines of a newline-separated listing of relative paths
    :param absolute: the pattern starts with ``/`` and is matched against absolute paths
    :param basename_only: the pattern has no ``/`` (only file names matter)
    """

    regex: re.Pattern[str]
    absolute: bool
    basename_only: bool
    case_insensitive: bool

    def matching_lines(self, listing: str) -> list[str]:
        """The lines of ``listing`` (relative paths) the pattern matches."""
        return self.regex.findall(listing)


def compile_glob(pattern: str) -> GlobMatcher:
    """Compile a find pattern with fd's rules (see the module docstring)."""
    insensitive = pattern == pattern.lower()
    flags = re.MULTILINE | (re.IGNORECASE if insensitive else 0)
    if "/" not in pattern:
        regex = rf"^(?:[^\n]*/)?{glob_to_regex(pattern)}$"
        return GlobMatcher(re.compile(regex, flags), False, True, insensitive)
    absolute = pattern.startswith("/")
    if not absolute and not pattern.startswith("**/") and pattern != "**":
        pattern = "**/" + pattern
    return GlobMatcher(
        re.compile(f"^{glob_to_regex(pattern)}$", flags), absolute, False, insensitive
    )


_SIMPLE_NAME_GLOB = re.compile(r"[A-Za-z0-9._*?@+ -]+")


def type_glob(pattern: str) -> str | None:
    """A ripgrep file-type glob selecting a superset of the files ``pattern`` matches, or None
    when there is no simple one.

    ``rg --glob`` would override .gitignore, so the listing is narrowed with a file type instead
    (types respect ignore rules). A type matches file names, so only the last component of a
    path pattern is used (``src/**/test_*.py`` -> ``test_*.py``); smart case-insensitivity is
    spelled out as ``[xX]`` classes.
    """
    name = pattern.rsplit("/", 1)[-1]
    if "**" in name or not _SIMPLE_NAME_GLOB.fullmatch(name):
        return None
    if pattern != pattern.lower():
        return name
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() and c.isascii() else c for c in name)
