"""Where installed packages' resources are: the folders skills, prompts, themes and extensions
are loaded from.

A resource package (git clone or local directory) provides ``extensions/``, ``skills/``,
``prompts/`` and ``themes/`` by convention. The object form of a settings entry narrows them:
``{"source": "git:…", "skills": ["skills/review"], "extensions": []}`` — a list of paths
relative to the package replaces the conventional folder for that kind (``[]`` turns the kind
off); a kind that is not named keeps its folder.

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
from knightcode._packages.installer import package_dir

if TYPE_CHECKING:
    from knightcode._config.loading import Settings

RESOURCE_KINDS = ("extensions", "skills", "prompts", "themes")


@dataclass
class PackageResources:
    """Resource paths by kind (each kind's list in settings order), and what could not be used.

    :param paths: ``{"extensions": [...], "skills": [...], "prompts": [...], "themes": [...]}``
    :param missing: sources declared but not installed
    :param errors: entries that could not be parsed, as messages
    """

    paths: dict[str, list[Path]] = field(
        default_factory=lambda: {kind: [] for kind in RESOURCE_KINDS}
    )
    missing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def resources_of(declared: Declared) -> dict[str, list[Path]]:
    """The existing resource paths of one installed resource package (empty for pip)."""
    root = package_dir(declared.source, declared.root)
    found: dict[str, list[Path]] = {kind: [] for kind in RESOURCE_KINDS}
    if root is None:
        return found
    filters = declared.filters()
    for kind in RESOURCE_KINDS:
        chosen = filters.get(kind)
        if isinstance(chosen, list):
            candidates = [root / str(item) for item in chosen if isinstance(item, str)]
        else:
            candidates = [root / kind]
        found[kind] = [path for path in candidates if path.exists()]
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


def package_resource_paths(settings: Settings) -> PackageResources:
    """The resource folders and files of every installed package the settings declare.

    Skills, prompt templates and themes loaders add ``paths[kind]`` to their search paths; the
    plugin planner loads ``paths["extensions"]`` like settings ``extensions`` entries. Installed
    pip packages contribute entry points, not paths, so they do not appear here.
    """
    result = PackageResources()
    declared, result.errors = declared_packages(settings)
    chosen: dict[str, Declared] = {}
    for item in declared:
        if item.source.kind != "pip":
            # The project's entry comes later and wins (its filters, its clone), as in the
            # reference; the package keeps the place of its first mention.
            chosen[item.source.identity] = item
    for item in chosen.values():
        root = package_dir(item.source, item.root)
        if root is None or not root.is_dir():
            result.missing.append(item.source.text)
            continue
        for kind, paths in resources_of(item).items():
            result.paths[kind].extend(paths)
    return result
