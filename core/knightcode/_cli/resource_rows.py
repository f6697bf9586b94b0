"""The skills and prompt templates rows of ``knightcode config list``, package resources with
their package and whether the package's filters enable them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._config.loading import Settings
    from knightcode._plugins.planning import HostOptions

SINGULAR = {"skills": "skill", "prompts": "prompt", "extensions": "extension", "themes": "theme"}


@dataclass(frozen=True)
class ResourceRow:
    """One resource: ``skill:NAME`` or ``/NAME`` (a disabled extension or theme: its name).

    :param status: ``loaded`` or ``disabled`` (by its package's filters)
    :param path: its file
    :param package: the package's source as declared, for a package's resource
    :param resource: its ``KIND/…`` path in the package (what ``config enable`` takes)
    """

    name: str
    kind: str
    status: str
    path: Path
    package: str | None = None
    resource: str | None = None

    @property
    def source(self) -> str:
        """The table's SOURCE: the file, or the package and the resource in it."""
        return f"{self.package} {self.resource}" if self.package else str(self.path)

    def as_json(self) -> dict[str, object]:
        """The ``config list --json`` record (the keys of a plugin's, and the package's)."""
        record: dict[str, object] = {
            "name": self.name,
            "kind": self.kind,
            "source": str(self.path),
            "enabled": self.status != "disabled",
            "status": self.status,
            "error": None,
        }
        if self.package is not None:
            record |= {"package": self.package, "resource": self.resource}
        return record


def _display_name(kind: str, name: str, path: Path) -> str:
    """How ``config list`` names a resource: like the plugin records for an extension."""
    if kind == "extensions":
        return f"ext:{path}"
    return f"skill:{name}" if kind == "skills" else f"/{name}" if kind == "prompts" else name


def resource_rows(options: HostOptions, settings: Settings, trusted: bool) -> list[ResourceRow]:
    """Every skill and template found, then the package resources turned off; warnings go to
    stderr. Plugins' ``resources_discover`` paths are not asked for here: that needs a session.

    :param settings: the settings the plugin host loaded (read once for the whole listing)
    :param trusted: whether the project is trusted, as the host found
    """
    from knightcode._packages import declares_packages
    from knightcode._resources.discovery import discover_resources, settings_sources

    found = discover_resources(
        settings_sources(options.agent_dir, options.cwd, settings, trusted=trusted)
    )
    for warning in found.warnings:
        print(f"knightcode: warning: {warning}", file=sys.stderr)
    owners: dict[Path, tuple[str, str, str, bool]] = {}
    if declares_packages(settings):
        from knightcode._packages.resources import (
            PackageResources,
            installed_packages,
            package_resources,
        )

        for declared in installed_packages(settings, PackageResources()):
            for kind, items in package_resources(declared).items():
                for item, on in items:
                    owners[item.path] = (declared.source.text, kind, item.rel, on)
    rows: list[ResourceRow] = []
    loaded = [("skills", skill.name, skill.path) for skill in found.skills]
    loaded += [("prompts", item.name, item.path) for item in found.templates]
    for kind, name, path in loaded:
        owner = owners.get(path)
        package, rel = (owner[0], owner[2]) if owner else (None, None)
        rows.append(
            ResourceRow(
                _display_name(kind, name, path), SINGULAR[kind], "loaded", path, package, rel
            )
        )
    for path, (source, kind, resource, on) in owners.items():
        if not on:
            name = _display_name(kind, Path(resource).stem, path)
            rows.append(ResourceRow(name, SINGULAR[kind], "disabled", path, source, resource))
    return rows
