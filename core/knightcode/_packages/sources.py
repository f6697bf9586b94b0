"""Package sources as users write them: ``pip:NAME[==VER]``, ``git:URL[@ref]`` and directories.

A source is parsed without touching the network. Its :attr:`Source.identity` says which
installed package it is regardless of version or ref, so ``install`` of a new version replaces
the old entry in settings and ``remove pip:x`` finds ``pip:x==1.0``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from knightcode._config.paths import expand_path
from knightcode._errors import UsageError

SourceKind = Literal["pip", "git", "local"]

_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9._,-]*\])?\s*(.*)$")
_SPECIFIER = re.compile(
    r"^(==|>=|<=|~=|!=|>|<)\s*[A-Za-z0-9.*+!_-]+(\s*,\s*(==|>=|<=|~=|!=|>|<)\s*[A-Za-z0-9.*+!_-]+)*$"
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_GIT_URL_PREFIXES = ("https://", "http://", "ssh://", "git://", "git@")
_HINT = "use pip:NAME[==VERSION], git:URL[@REF] or the path of a directory"


@dataclass(frozen=True)
class Source:
    """One parsed package source.

    :param kind: ``pip`` (a Python distribution), ``git`` (a cloned resource package) or
        ``local`` (a directory used in place)
    :param text: the source as written (what settings record)
    :param identity: the package whatever its version: ``pip:<normalised name>``,
        ``git:<host>/<path>`` or ``local:<absolute path>``
    :param pinned: an exact version (``==``), a git ref or a wheel file: ``update`` skips it
    :param target: what the tool is given: pip's requirement or file, git's clone URL, the
        directory of a local package
    :param ref: the git ref to check out
    :param location: for git, ``<host>/<path>``, where the clone goes under ``packages/git/``
    """

    kind: SourceKind
    text: str
    identity: str
    pinned: bool
    target: str
    ref: str | None = None
    location: str | None = None


def normalise_name(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _pip(text: str, rest: str, base_dir: Path) -> Source:
    rest = rest.strip()
    if not rest:
        raise UsageError(f"bad package source {text!r}: pip: needs a package name ({_HINT})")
    if rest.endswith((".whl", ".tar.gz", ".zip")) or "/" in rest:
        path = expand_path(rest, base_dir).resolve()
        stem = path.name.split("-", 1)[0]
        if not stem:
            raise UsageError(f"bad package source {text!r}: cannot tell the package name")
        # A file is one fixed version; there is nothing for update to fetch.
        return Source("pip", text, f"pip:{normalise_name(stem)}", True, str(path))
    match = _REQUIREMENT.match(rest)
    specifier = match.group(3).strip() if match else ""
    if match is None or (specifier and not _SPECIFIER.match(specifier)):
        raise UsageError(f"bad package source {text!r}: expected pip:NAME or pip:NAME==VERSION")
    name = match.group(1)
    return Source("pip", text, f"pip:{normalise_name(name)}", specifier.startswith("=="), rest)


def _git_location(url: str) -> str:
    """``<host>/<path>`` of a clone URL, without ``.git``: where the clone is kept."""
    if "://" in url:
        parts = urlsplit(url)
        host, path = parts.hostname or "local", parts.path
    elif url.startswith("git@") and ":" in url:
        host, path = url[4:].split(":", 1)
    else:
        host, _, path = url.partition("/")
    segments = [segment for segment in path.strip("/").split("/") if segment]
    if segments:
        segments[-1] = segments[-1].removesuffix(".git")
    if not host or not segments or any(s in (".", "..") for s in [host, *segments]):
        raise UsageError(f"bad git URL {url!r}: expected host/path (e.g. github.com/user/repo)")
    return "/".join([host, *segments])


def _git(text: str, rest: str) -> Source:
    rest = rest.strip()
    url, ref = rest, None
    slash = rest.rfind("/")
    if slash >= 0 and "@" in rest[slash:]:
        url, ref = rest.rsplit("@", 1)
        if not ref:
            raise UsageError(f"bad package source {text!r}: empty ref after '@'")
    if not url:
        raise UsageError(f"bad package source {text!r}: git: needs a URL ({_HINT})")
    clone_url = url if url.startswith(_GIT_URL_PREFIXES) or "://" in url else f"https://{url}"
    location = _git_location(clone_url)
    return Source("git", text, f"git:{location}", ref is not None, clone_url, ref, location)


def parse_source(text: str, base_dir: Path) -> Source:
    """Parse a package source; relative paths are relative to ``base_dir``.

    A directory is not checked for existence here: settings may name one that is gone, and
    ``list`` should still show it.

    :raises UsageError: the source cannot be understood
    """
    stripped = text.strip()
    if not stripped:
        raise UsageError(f"empty package source ({_HINT})")
    if stripped.startswith("pip:"):
        return _pip(text, stripped[4:], base_dir)
    if stripped.startswith("git:"):
        return _git(text, stripped[4:])
    if stripped.startswith(_GIT_URL_PREFIXES):
        return _git(text, stripped)
    scheme = _SCHEME.match(stripped)
    if scheme and len(scheme.group(1)) > 1:
        raise UsageError(f"unknown package source {text!r} ({scheme.group(1)}:); {_HINT}")
    path = expand_path(stripped, base_dir).resolve()
    return Source("local", text, f"local:{path}", True, str(path))
