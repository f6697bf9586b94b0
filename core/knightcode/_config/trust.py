"""Project trust: whether the files in a project's ``.knightcode/`` may be used.

A project's ``.knightcode/`` can run code (extensions) and steer the model (settings, SYSTEM.md,
skills), so none of it is read until the user trusts the project. Trust is recorded in
``<agent-dir>/trust.json`` per project directory, with a fingerprint of every file the project
can make knightcode import or read as configuration; when any of them is added, removed or
modified the trust is withdrawn until the user looks again (someone else's commit must not
inherit it).

The fingerprint is computed without running anything: it reads ``settings.json`` as data to
find the extensions it names. Python bytecode is not part of it because knightcode never
imports an extension from bytecode (:mod:`knightcode._plugins.source_imports`).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from knightcode._config.jsonfile import read_json_object, write_json_atomic
from knightcode._config.paths import extension_entry_path, project_config_dir
from knightcode._config.values import check_choice
from knightcode._errors import ConfigError, KnightcodeError, SettingsError

TRUST_FILENAME = "trust.json"
TRUST_FILES = ("settings.json", "mcp.json", "SYSTEM.md", "APPEND_SYSTEM.md")
"""Files directly in ``.knightcode/`` that change behaviour."""
TRUST_DIRS = ("extensions", "prompts", "skills", "themes")
"""Directories of ``.knightcode/`` whose every file (recursively) changes behaviour."""

TrustState = Literal["none", "trusted", "untrusted", "changed"]


def _digest(path: Path) -> str | None:
    """sha256 of a file's contents, or None when there is no readable file at ``path``.

    A symlinked file is hashed by its target's contents: that is what gets loaded. Anything but
    a regular file (a FIFO, a device such as ``/dev/zero``) is not read — reading it could block
    or never end — and is recorded by its kind instead, so planting one still withdraws trust.
    """
    try:
        # O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        # Missing or unreadable: left out rather than guessed at. If it becomes a readable
        # file later it shows up as "added", which withdraws trust.
        return None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            return None
        if not stat.S_ISREG(mode):
            return f"not a regular file (mode {stat.S_IFMT(mode):o})"
        hasher = hashlib.sha256()
        try:
            for block in iter(lambda: handle.read(1 << 16), b""):
                hasher.update(block)
        except OSError:
            return None
    return hasher.hexdigest()


def _files_under(tree: Path) -> Iterator[Path]:
    """Every file under ``tree``, recursively, without Python bytecode; ``tree`` itself when it
    is not a directory.

    Symlinked directories are followed: an extension folder linked to elsewhere in the repository
    runs that code, so an edit there must withdraw trust like an edit here. Each real directory is
    walked once, so a link cycle cannot loop.
    """
    if not tree.is_dir():
        yield tree
        return
    seen: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(tree, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        here = Path(dirpath)
        # Bytecode is never imported from an extension folder, and importing writes it.
        dirnames[:] = sorted(entry for entry in dirnames if entry != "__pycache__")
        yield from (here / entry for entry in sorted(filenames) if not entry.endswith(".pyc"))


def _named_extensions(config_dir: Path) -> Iterator[Path]:
    """The files behind the ``extensions`` entries of the project's ``settings.json``.

    Entries are resolved and expanded exactly as plugin loading does (a folder without
    ``__init__.py`` brings in the ``*.py`` files and packages directly inside it), so what is
    hashed is what would be imported, wherever it lives: ``"c.py"`` beside the settings file,
    ``"../tools/ext.py"``, an absolute path. A settings file that cannot be read names nothing;
    its own digest is in the fingerprint anyway, and loading it would fail.
    """
    from knightcode._plugins.discovery import path_candidates
    from knightcode._plugins.records import PluginKind

    try:
        data = read_json_object(config_dir / "settings.json") or {}
    except ConfigError:
        return
    entries = data.get("extensions")
    paths = [
        path
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, str) and (path := extension_entry_path(entry, config_dir))
    ]
    for candidate in path_candidates(paths, PluginKind.SETTINGS):
        if candidate.path is not None and candidate.error is None:
            yield from _files_under(candidate.path)
    yield from _package_files(config_dir, data)


def _package_files(config_dir: Path, data: dict[str, object]) -> Iterator[Path]:
    """Every resource file of the packages the project declares (extensions, skills, prompts,
    themes of its clones and directories): a commit that changes one must withdraw trust like
    a change in ``.knightcode/extensions/``.
    """
    entries = data.get("packages")
    if not isinstance(entries, list) or not entries:
        return  # the common case: the package code is not even imported
    from knightcode._packages.declared import parse_entries
    from knightcode._packages.resources import resources_of

    for entry in entries:
        if not isinstance(entry, (str, dict)) or (
            isinstance(entry, dict) and "source" not in entry
        ):
            continue
        try:
            declared = parse_entries([entry], "project", config_dir)
        except KnightcodeError:
            continue  # loading reports it; nothing of it would load
        for paths in resources_of(declared[0]).values():
            for path in paths:
                yield from _files_under(path)


def _key(path: Path, config_dir: Path) -> str:
    """How a file is named in the fingerprint: relative to ``.knightcode/`` when it is inside
    it, else its absolute path — which no relative name can equal.
    """
    try:
        return path.relative_to(config_dir).as_posix()
    except ValueError:
        return str(path)


def fingerprint(project_config_dir: Path) -> dict[str, str]:
    """sha256 of each trust-relevant file of a ``.knightcode/`` directory.

    :returns: file name → hex digest, sorted by name; a file in ``.knightcode/`` by its posix
        path relative to it, an extension the settings name outside it by its absolute path;
        empty when nothing needs trust
    """
    paths = [project_config_dir / name for name in TRUST_FILES]
    for name in TRUST_DIRS:
        paths.extend(_files_under(project_config_dir / name))
    real_config_dir = project_config_dir.resolve()
    prints: dict[str, str] = {}
    for path in paths:
        digest = _digest(path)
        if digest is not None:
            prints[_key(path, project_config_dir)] = digest
    for path in _named_extensions(project_config_dir):
        digest = _digest(path)
        if digest is not None:
            prints.setdefault(_key(path, real_config_dir), digest)
    return dict(sorted(prints.items()))


def _changes(recorded: dict[str, str], current: dict[str, str]) -> list[str]:
    """What differs between two fingerprints, as sorted ``"<path> (added|removed|modified)"``."""
    changed = [f"{name} (added)" for name in current.keys() - recorded.keys()]
    changed += [f"{name} (removed)" for name in recorded.keys() - current.keys()]
    changed += [
        f"{name} (modified)"
        for name in current.keys() & recorded.keys()
        if current[name] != recorded[name]
    ]
    return sorted(changed)


@dataclass
class TrustStatus:
    """Where a project stands.

    :param state: ``"none"`` — nothing in ``.knightcode/`` needs trust; ``"trusted"``;
        ``"untrusted"`` — never trusted; ``"changed"`` — trusted, but files were added, removed
        or modified since
    :param changed: for ``"changed"``, the differences, sorted, e.g. ``"settings.json (modified)"``
    """

    state: TrustState
    changed: list[str] = field(default_factory=list)


class TrustStore:
    """The trust decisions recorded in ``<agent-dir>/trust.json``."""

    def __init__(self, agent_dir: Path) -> None:
        self.path = agent_dir / TRUST_FILENAME

    @staticmethod
    def _key(cwd: Path) -> str:
        return str(cwd.resolve())

    def _read(self) -> dict[str, object]:
        data = read_json_object(self.path) or {}
        projects = data.get("projects", {})
        if not isinstance(projects, dict):
            raise ConfigError(f'{self.path}: "projects" must be a JSON object')
        return {str(key): value for key, value in projects.items()}

    def _recorded(self, cwd: Path) -> dict[str, str] | None:
        entry = self._read().get(self._key(cwd))
        files = entry.get("files") if isinstance(entry, dict) else None
        if not isinstance(files, dict):
            return None
        recorded = {str(name): digest for name, digest in files.items() if isinstance(digest, str)}
        return recorded if len(recorded) == len(files) else None  # a damaged record trusts nothing

    def status(self, cwd: Path) -> TrustStatus:
        """The trust state of the project in ``cwd``."""
        current = fingerprint(project_config_dir(cwd))
        if not current:
            return TrustStatus("none")
        recorded = self._recorded(cwd)
        if recorded is None:
            return TrustStatus("untrusted")
        changed = _changes(recorded, current)
        return TrustStatus("changed", changed) if changed else TrustStatus("trusted")

    def trust(self, cwd: Path) -> None:
        """Record trust in the project's current ``.knightcode/`` files."""
        projects = self._read()
        projects[self._key(cwd)] = {
            "trustedAt": datetime.now(UTC).isoformat(timespec="seconds"),
            "files": fingerprint(project_config_dir(cwd)),
        }
        self._write(projects)

    def revoke(self, cwd: Path) -> bool:
        """Forget the project's trust; False when it was not recorded."""
        projects = self._read()
        if projects.pop(self._key(cwd), None) is None:
            return False
        self._write(projects)
        return True

    def _write(self, projects: dict[str, object]) -> None:
        # 0600: the file lists the user's projects, which is nobody else's business.
        write_json_atomic(self.path, {"version": 1, "projects": projects}, mode=0o600)


@dataclass
class TrustDecision:
    """Whether this run uses the project's ``.knightcode/``.

    :param trusted: read project settings, extensions, SYSTEM.md …
    :param status: the recorded state behind the decision
    :param notice: one line for the user when project configuration is being ignored
    """

    trusted: bool
    status: TrustStatus
    notice: str | None = None


def _default_trust(agent_dir: Path) -> str:
    """``defaultProjectTrust`` from the *global* settings: a project cannot vouch for itself."""
    path = agent_dir / "settings.json"
    value = (read_json_object(path) or {}).get("defaultProjectTrust", "ask")
    problem = check_choice(value, ("ask", "always", "never"))
    if problem is not None:
        raise SettingsError(str(path), "defaultProjectTrust", problem)
    return str(value)


def resolve_trust(agent_dir: Path, cwd: Path, *, approve: bool) -> TrustDecision:
    """Decide whether to trust the project in ``cwd`` for this run.

    Trusted when the recorded fingerprint still matches, when ``approve`` is set (``--approve``:
    this run only, nothing recorded) or when the global ``defaultProjectTrust`` is ``"always"``.
    ``"ask"`` and ``"never"`` both mean not trusted here: there is no prompt in this path.
    """
    status = TrustStore(agent_dir).status(cwd)
    if status.state == "trusted":
        return TrustDecision(True, status)
    if status.state == "none" or approve:
        return TrustDecision(approve, status)
    if _default_trust(agent_dir) == "always":
        return TrustDecision(True, status)
    config_dir = project_config_dir(cwd)
    if status.state == "changed":
        notice = (
            f"project trust withdrawn: .knightcode files changed since you trusted them "
            f"({', '.join(status.changed)}); run 'knightcode trust' to trust them again"
        )
    else:
        notice = (
            f"project settings in {config_dir} are not trusted and were ignored; "
            f"run 'knightcode trust' to use them"
        )
    return TrustDecision(False, status, notice)
