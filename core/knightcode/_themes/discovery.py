"""Which themes exist and which one is used.

Found in this order, the first of a name winning (a later one is reported and left out): the
built-in ``dark`` and ``light``; ``<agent-dir>/themes/*.json``; a trusted project's
``.knightcode/themes/*.json``; the ``themes`` setting (files or folders, relative to the
settings file that names them); installed packages' ``themes/`` (only when packages are
declared); plugins' ``resources_discover`` theme paths. ``--theme`` names one of those or the
path of a theme file, and wins over setting ``theme``; with neither, the terminal's background
picks ``dark`` or ``light`` (:mod:`.background`).

Files are only listed here; each is read when it is selected (or shown in ``/settings``), so an
invalid theme costs nothing until it is used, and is then reported with every problem named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._themes.builtin import BUILTIN_NAMES, builtin_path, builtin_theme
from knightcode._themes.loader import ThemeFileError, load_theme_file

if TYPE_CHECKING:
    from knightcode._config.loading import Settings
    from knightcode._modes.interactive.render.theme import Theme

__all__ = ["Selection", "ThemeCatalog", "ThemeEntry", "ThemeSources", "discover_themes", "select"]

THEMES_DIR = "themes"


@dataclass(frozen=True)
class ThemeEntry:
    """A theme that can be selected.

    :param name: its name (the file's ``name``; the file stem until it is read)
    :param path: its file
    :param source: where it was found: ``builtin``, ``user``, ``project``, ``path``,
        ``package:<source>``, ``plugin``, ``cli``
    """

    name: str
    path: Path
    source: str


@dataclass(frozen=True)
class ThemeSources:
    """What discovery reads besides the fixed folders.

    :param agent_dir: the agent directory (``themes/``)
    :param cwd: the working directory (``.knightcode/themes/`` when trusted)
    :param trusted: whether the project's ``.knightcode/`` is used
    :param setting_paths: the ``themes`` setting, ``(entry, base dir)`` pairs
    :param package_paths: installed packages' theme folders or files, ``(source, path)``
    :param plugin_paths: ``resources_discover`` theme paths, ``(plugin, path)``
    """

    agent_dir: Path
    cwd: Path
    trusted: bool = False
    setting_paths: Sequence[tuple[str, Path]] = ()
    package_paths: Sequence[tuple[str, Path]] = ()
    plugin_paths: Sequence[tuple[str, Path]] = ()


@dataclass
class ThemeCatalog:
    """Every theme found, by name, and what to tell the user about them."""

    entries: list[ThemeEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        """The names, built-ins first, in discovery order."""
        return [entry.name for entry in self.entries]

    def entry(self, name: str) -> ThemeEntry | None:
        """The theme called ``name``, or None."""
        return next((entry for entry in self.entries if entry.name == name), None)

    def add(self, entry: ThemeEntry) -> ThemeEntry:
        """``entry``, or the one that already has its name (reported)."""
        winner = self.entry(entry.name)
        if winner is None:
            self.entries.append(entry)
            return entry
        if winner.path.resolve() != entry.path.resolve():
            self.warnings.append(
                f'{entry.path}: theme name "{entry.name}" collision: {winner.path} is used instead'
            )
        return winner


def theme_files(path: Path) -> list[Path]:
    """The ``.json`` files of a folder (not recursive, sorted), or the file itself."""
    if path.is_file():
        return [path]
    try:
        return sorted(child for child in path.iterdir() if child.suffix == ".json")
    except OSError:
        return []


def sources_for(
    agent_dir: Path,
    cwd: Path,
    settings: Settings,
    *,
    trusted: bool,
    plugin_paths: Sequence[tuple[str, Path]] = (),
) -> ThemeSources:
    """The sources of a run with these settings (package code is read only when packages are
    declared: this runs on every start).
    """
    from knightcode._errors import SettingsError
    from knightcode._packages import declares_packages

    package_paths: list[tuple[str, Path]] = []
    if declares_packages(settings):
        from knightcode._packages.resources import package_resource_paths

        package_paths = package_resource_paths(settings).owned["themes"]
    try:
        setting_paths = settings.path_entries("themes")
    except SettingsError:
        setting_paths = []  # reported where settings are checked; no themes from it
    return ThemeSources(agent_dir, cwd, trusted, setting_paths, package_paths, plugin_paths)


def discover_themes(sources: ThemeSources, *, user: bool = True) -> ThemeCatalog:
    """Every theme of ``sources`` (see the module docstring for the order); only the
    built-ins without ``user``.
    """
    from knightcode._config.paths import expand_path, project_config_dir

    catalog = ThemeCatalog()
    for name in BUILTIN_NAMES:
        catalog.add(ThemeEntry(name, builtin_path(name), "builtin"))
    if not user:
        return catalog
    places: list[tuple[str, Path]] = [("user", sources.agent_dir / THEMES_DIR)]
    if sources.trusted:
        places.append(("project", project_config_dir(sources.cwd) / THEMES_DIR))
    places += [("path", expand_path(entry, base)) for entry, base in sources.setting_paths]
    places += [(f"package:{source}", path) for source, path in sources.package_paths]
    places += [("plugin", path) for _plugin, path in sources.plugin_paths]
    for source, place in places:
        for path in theme_files(place):
            catalog.add(ThemeEntry(name_of(path), path, source))
        if source == "path" and not place.exists():
            catalog.warnings.append(f"{place}: theme path from settings 'themes' not found")
    return catalog


def name_of(path: Path) -> str:
    """The ``name`` a theme file declares (its stem when it has none, or cannot be read: the
    error is reported when it is selected).
    """
    import json

    try:
        data: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return path.stem
    name = data.get("name") if isinstance(data, dict) else None
    return name.strip() if isinstance(name, str) and name.strip() else path.stem


@dataclass(frozen=True)
class Selection:
    """The theme to use, and why it is not the one asked for (if so).

    :param theme: the renderers' theme
    :param entry: its catalog entry (also when its file is invalid and ``theme`` is the
        fallback; None for a name or file that does not exist)
    :param warning: what went wrong: an unknown name, an invalid file (every problem named)
    """

    theme: Theme
    entry: ThemeEntry | None
    warning: str | None = None


def load_entry(entry: ThemeEntry) -> Theme:
    """``entry``'s theme; raises :class:`ThemeFileError`."""
    from knightcode._themes.build import build_theme

    if entry.source == "builtin":
        return builtin_theme(entry.name)
    return build_theme(load_theme_file(entry.path))


def select(catalog: ThemeCatalog, wanted: str, fallback: str = "dark") -> Selection:
    """Theme ``wanted`` (a name, or with ``/`` or ``.json`` a file's path, added to the
    catalog as ``cli``); an unknown name or an invalid file gives built-in ``fallback`` and a
    warning naming the problem.
    """
    entry = catalog.entry(wanted)
    if entry is None and (wanted.endswith(".json") or "/" in wanted):
        path = Path(wanted).expanduser()
        if not path.is_file():
            return _fallback(fallback, f"theme file {path} not found; using {fallback}")
        entry = catalog.add(ThemeEntry(name_of(path), path.resolve(), "cli"))
    if entry is None:
        known = ", ".join(catalog.names)
        return _fallback(fallback, f'theme "{wanted}" not found (known: {known}); using {fallback}')
    try:
        return Selection(load_entry(entry), entry)
    except ThemeFileError as error:
        # The entry stays: its file is watched, and fixing it brings the theme back.
        return Selection(builtin_theme(fallback), entry, f"invalid theme {error}; using {fallback}")


def _fallback(name: str, warning: str) -> Selection:
    return Selection(builtin_theme(name), None, warning)
