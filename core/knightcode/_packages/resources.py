"""Where installed packages' resources are: the folders skills, prompts, themes and extensions
are loaded from.

A resource package (git clone or local directory) provides ``extensions/``, ``skills/``,
``prompts/`` and ``themes/`` by convention. The object form of a settings entry filters them
per kind: ``{"source": "git:…", "skills": ["!skills/old", "-skills/review"], "extensions": []}``
(see :mod:`knightcode._packages.filters` for the rules; a kind that is not named keeps its whole
folder, ``[]`` turns it off). A plain path outside the conventional folder adds what is there.

Loaders call :func:`package_resource_paths` with the run's :class:`Settings`: the project's
packages are there only when the project is trusted, because ``Settings`` only reads its file
then. Nothing is imported or fetched here; a package that is declared but not installed is
reported in ``missing`` ('knightcode install' fetches it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._packages.declared import Declared, Scope, parse_entries
from knightcode._packages.filters import OVERRIDES, Resource, enabled, is_pattern, resource_at
from knightcode._packages.installer import package_dir

if TYPE_CHECKING:
    from knightcode._config.loading import Settings

RESOURCE_KINDS = ("extensions", "skills", "prompts", "themes")


@dataclass
class PackageResources:
    """Resource paths by kind (each kind's list in settings order), and what could not be used.

    :param owned: ``{kind: [(package source, path), ...]}`` for ``extensions``, ``skills``,
        ``prompts`` and ``themes``: a kind's folder when it is not filtered, else each enabled
        resource
    :param missing: sources declared but not installed
    :param errors: entries that could not be parsed, as messages
    """

    owned: dict[str, list[tuple[str, Path]]] = field(
        default_factory=lambda: {kind: [] for kind in RESOURCE_KINDS}
    )
    missing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def paths(self) -> dict[str, list[Path]]:
        """:attr:`owned` without the packages."""
        return {kind: [path for _, path in items] for kind, items in self.owned.items()}


def _listing(kind: str, path: Path) -> list[Path]:
    """The resources of one kind in a folder (the loaders' rules), or the file itself."""
    if path.is_file():
        return [path]
    if kind == "skills":
        from knightcode._resources.skills import skill_files

        return skill_files(path)
    if kind == "prompts":
        from knightcode._resources.templates import template_files

        return template_files(path)
    if kind == "extensions":
        from knightcode._plugins.discovery import scan_extension_dir
        from knightcode._plugins.records import PluginKind

        found = scan_extension_dir(path, PluginKind.SETTINGS)
        return [item.path for item in found if item.path is not None]
    return sorted(item for item in path.glob("*.json") if item.is_file())


def _relative(entry: str, root: Path) -> str:
    """An absolute filter path inside the package, made relative like the others."""
    prefix = entry[0] if entry.startswith(OVERRIDES) else ""
    path = Path(entry[len(prefix) :])
    if path.is_absolute() and path.is_relative_to(root):
        return prefix + path.relative_to(root).as_posix()
    return entry


def package_resources(declared: Declared) -> dict[str, list[tuple[Resource, bool]]]:
    """Every resource of an installed resource package by kind, each with whether the entry's
    filters enable it (all of them when the kind is not filtered). Empty for pip.
    """
    root = package_dir(declared.source, declared.root)
    found: dict[str, list[tuple[Resource, bool]]] = {kind: [] for kind in RESOURCE_KINDS}
    if root is None:
        return found
    filters = declared.filters()
    for kind in RESOURCE_KINDS:
        folder = root / kind
        paths = _listing(kind, folder) if folder.exists() else []
        chosen = filters.get(kind)
        if not isinstance(chosen, list):
            found[kind] = [(resource_at(path, root), True) for path in paths]
            continue
        entries = [_relative(item, root) for item in chosen if isinstance(item, str)]
        for entry in entries:
            extra = root / entry
            if not is_pattern(entry) and extra.exists() and not extra.is_relative_to(folder):
                paths += [path for path in _listing(kind, extra) if path not in paths]
        resources = [resource_at(path, root) for path in paths]
        found[kind] = list(zip(resources, enabled(resources, entries), strict=True))
    return found


def resources_of(declared: Declared) -> dict[str, list[Path]]:
    """What loaders read of one installed resource package: each kind's folder when the entry
    does not filter it, else the enabled resources (empty for pip).
    """
    root = package_dir(declared.source, declared.root)
    found: dict[str, list[Path]] = {kind: [] for kind in RESOURCE_KINDS}
    if root is None:
        return found
    filters = declared.filters()
    detailed: dict[str, list[tuple[Resource, bool]]] | None = None
    for kind in RESOURCE_KINDS:
        if isinstance(filters.get(kind), list):
            detailed = detailed or package_resources(declared)
            found[kind] = [item.path for item, on in detailed[kind] if on]
        elif (root / kind).exists():
            found[kind] = [root / kind]
    return found


def declared_packages(settings: Settings) -> tuple[list[Declared], list[str]]:
    """Every package the loaded settings files declare (user first, then the trusted project's),
    and the messages of entries that could not be parsed.
    """
    from knightcode._errors import KnightcodeError

    declared: list[Declared] = []
    errors: list[str] = []
    layers: list[tuple[Scope, dict[str, object] | None, Path]] = [
        ("user", settings.global_data, settings.global_path),
        ("project", settings.project_data, settings.project_path),
    ]
    for scope, data, path in layers:
        entries = (data or {}).get("packages")
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, (str, dict)):
                continue
            try:
                declared += parse_entries([entry], scope, path.parent)
            except (KnightcodeError, KeyError) as error:
                errors.append(f"{path}: packages: {error}")
    return declared, errors


def installed_packages(settings: Settings, result: PackageResources) -> list[Declared]:
    """The declared resource packages that are installed, one entry per package (the
    project's entry comes later and wins, its filters and its clone, as in the reference; the
    package keeps the place of its first mention). Parse errors and missing packages go to
    ``result``.
    """
    declared, result.errors = declared_packages(settings)
    chosen: dict[str, Declared] = {}
    for item in declared:
        if item.source.kind != "pip":
            chosen[item.source.identity] = item
    installed = []
    for item in chosen.values():
        root = package_dir(item.source, item.root)
        if root is None or not root.is_dir():
            result.missing.append(item.source.text)
        else:
            installed.append(item)
    return installed


def package_resource_paths(settings: Settings) -> PackageResources:
    """The resource folders and files of every installed package the settings declare.

    Skills, prompt templates and themes loaders add ``owned[kind]`` to their search paths,
    labelled with the package; the plugin planner loads ``paths["extensions"]`` like settings
    ``extensions`` entries. Installed pip packages contribute entry points, not paths, so they
    do not appear here.
    """
    result = PackageResources()
    for item in installed_packages(settings, result):
        for kind, paths in resources_of(item).items():
            result.owned[kind] += [(item.source.text, path) for path in paths]
    return result
