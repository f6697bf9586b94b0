"""Finding plugins without importing them.

Discovery only lists candidates — names, kinds and locations — so that blocking (``-NAME`` in
settings) can happen before any plugin code runs, and so that ``--help`` and ``knightcode config``
keep working whatever a plugin does when imported.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._plugins.records import PluginKind

if TYPE_CHECKING:
    import importlib_metadata

BUILTIN_GROUP = "knightcode.builtins"
PACKAGE_GROUP = "knightcode.plugins"

KNOWN_BUILTINS: tuple[str, ...] = ("compaction", "llama.cpp", "web-tools", "gondolin")
"""Every built-in the product has or will have; blocking one of these never warns."""

EXPECTED_BUILTINS: tuple[str, ...] = ("compaction", "llama.cpp", "gondolin", "web-tools", "mcp")
"""Built-ins this version of knightcode declares in its own metadata. One that the installed
metadata lacks (a stale editable install, a broken wheel) is reported as missing. Each built-in's
issue adds its name here together with its entry point."""


@dataclass(frozen=True)
class Candidate:
    """A plugin found by discovery, not yet imported.

    :param name: the plugin's name (what ``-NAME`` blocks)
    :param kind: where it was found
    :param source: human-readable location (path, or ``module:attr`` for entry points)
    :param path: the extension file or folder (None for entry points)
    :param entry_point: the entry point object for built-ins and packages
    :param error: set when the candidate is known to be unloadable (e.g. a missing path)
    """

    name: str
    kind: PluginKind
    source: str
    path: Path | None = None
    entry_point: importlib_metadata.EntryPoint | None = None
    error: str | None = None


def extension_name(path: Path) -> str:
    """The name of an extension file or folder: ``ext:<absolute path>``."""
    return f"ext:{path}"


LOAD_PLUGINS_ENV = "KNIGHTCODE_LOAD_PLUGINS"
"""Allow-list of installed plugins: comma-separated names (``builtin:compaction,plugin:x``);
set but empty, no built-in or package plugin loads. Extensions are not affected. For debugging
("is it one of my plugins?") and for isolated tests."""


def allowed_entry_points(
    environ: os._Environ[str] | dict[str, str] | None = None,
) -> set[str] | None:
    """The names ``KNIGHTCODE_LOAD_PLUGINS`` allows, or None when it is not set."""
    value = (os.environ if environ is None else environ).get(LOAD_PLUGINS_ENV)
    if value is None:
        return None
    return {name.strip() for name in value.split(",") if name.strip()}


def entry_point_candidates(
    group: str,
    kind: PluginKind,
    prefix: str,
    installed: importlib_metadata.EntryPoints | None = None,
) -> list[Candidate]:
    """Entry points of ``group`` from the installed metadata (``installed``, when the caller
    read it already), in name order (deterministic), filtered by ``KNIGHTCODE_LOAD_PLUGINS``
    when it is set.
    """
    found: dict[str, Candidate] = {}
    entry_points = installed if installed is not None else installed_entry_points()
    for ep in entry_points.select(group=group):
        # Two distributions can declare one name (e.g. an editable install beside a wheel);
        # the first one the path yields is the one Python would import.
        found.setdefault(ep.name, Candidate(f"{prefix}{ep.name}", kind, ep.value, entry_point=ep))
    allowed = allowed_entry_points()
    return [found[name] for name in sorted(found) if allowed is None or found[name].name in allowed]


def installed_entry_points() -> importlib_metadata.EntryPoints:
    """Every installed entry point. Scanning the installed distributions costs milliseconds:
    read them once and select each group from the result.
    """
    # importlib_metadata (the backport) rather than the stdlib copy: same API on every
    # supported Python, and the faster entry-point scan of recent releases.
    import importlib_metadata

    return importlib_metadata.entry_points()


def _is_extension_file(path: Path) -> bool:
    return path.suffix == ".py" and not path.name.startswith(("_", "."))


def _is_extension_package(path: Path) -> bool:
    return (
        path.is_dir() and not path.name.startswith(("_", ".")) and (path / "__init__.py").is_file()
    )


def scan_extension_dir(directory: Path, kind: PluginKind) -> list[Candidate]:
    """The ``*.py`` files and the folders with ``__init__.py`` directly inside ``directory``.

    Names starting with ``_`` or ``.`` are skipped so helpers and caches can live beside
    extensions. A missing directory holds no extensions.
    """
    try:
        children = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in children:
        path = Path(entry.path).resolve()
        if (_is_extension_file(path) and path.is_file()) or _is_extension_package(path):
            found.append(Candidate(extension_name(path), kind, str(path), path=path))
    return found


def path_candidates(paths: Iterable[Path], kind: PluginKind) -> list[Candidate]:
    """Candidates for explicitly named paths (settings ``extensions`` entries and ``-e``).

    A ``.py`` file or a folder with ``__init__.py`` is one extension; any other folder is
    scanned like an extensions directory. A path that does not exist becomes a failed candidate,
    so the user hears about the typo instead of silently losing the extension.
    """
    found: list[Candidate] = []
    for raw in paths:
        path = raw.resolve()
        if path.is_file() or (path / "__init__.py").is_file():
            found.append(Candidate(extension_name(path), kind, str(path), path=path))
        elif path.is_dir():
            found.extend(scan_extension_dir(path, kind))
        else:
            found.append(
                Candidate(
                    extension_name(path),
                    kind,
                    str(path),
                    path=path,
                    error=f"extension path not found: {path}",
                )
            )
    return found


def dedupe(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Keep the first candidate of each name, so an extension reachable two ways loads once."""
    seen: set[str] = set()
    unique = []
    for candidate in candidates:
        if candidate.name not in seen:
            seen.add(candidate.name)
            unique.append(candidate)
    return unique


def matches_block(candidate: Candidate, blocked: str) -> bool:
    """Whether a blocking entry (without its leading ``-``) names this candidate.

    Besides the full name, an extension can be blocked by its file or folder name
    (``-ext:my_tool`` for ``…/extensions/my_tool.py``), because absolute paths are awkward to type.
    """
    if blocked == candidate.name:
        return True
    if candidate.path is not None and blocked.startswith("ext:"):
        short = blocked[4:]
        return short in (candidate.path.stem, candidate.path.name)
    return False
