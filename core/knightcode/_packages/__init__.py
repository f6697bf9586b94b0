"""Packages: ``knightcode install`` sources, their settings entries and their resources.

:func:`knightcode._packages.resources.package_resource_paths` is what resource loaders use;
they call :func:`declares_packages` first, so a start without packages imports none of this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._config.loading import Settings


def declares_packages(settings: Settings) -> bool:
    """Whether the loaded settings files (the project's only when trusted) name any package."""
    return bool(settings.global_data.get("packages")) or bool(
        (settings.project_data or {}).get("packages")
    )
