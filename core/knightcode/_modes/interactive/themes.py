"""The interactive session's theme: chosen at start, previewed and switched from ``/settings``,
and read again when its file changes.

At start: ``--theme`` (a name or a file), else setting ``theme``, else the terminal's
background (``dark`` or ``light``). A theme that cannot be used (unknown name, invalid file)
falls back to the built-in default with a warning naming every problem; the session never
fails for a theme.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._themes.discovery import (
    Selection,
    ThemeCatalog,
    ThemeEntry,
    ThemeSources,
    discover_themes,
    select,
    sources_for,
)

if TYPE_CHECKING:
    from knightcode._cli.main_command import RunRequest
    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._modes.interactive.render.theme import Theme
    from knightcode._plugins.planning import LoadPlan
    from knightcode._resources.discovery import ResourceSet

__all__ = [
    "AppThemes",
    "css_variables",
    "default_themes",
    "reload_themes",
    "start_themes",
    "watch_theme_file",
]

WATCH_DEBOUNCE_MS = 100


class AppThemes:
    """The catalog and the theme in use.

    :param catalog: the themes found
    :param selection: the one in use
    :param fallback: the built-in used when a theme cannot be (the detected background)
    """

    def __init__(self, catalog: ThemeCatalog, selection: Selection, fallback: str) -> None:
        self.catalog = catalog
        self.current: Theme = selection.theme
        self.entry: ThemeEntry | None = selection.entry
        self.fallback = fallback
        self.changed = asyncio.Event()
        """Set when the theme (or its file) changes: the file watcher follows the new one."""

    @property
    def name(self) -> str:
        """The theme's name (the fallback's after an error)."""
        return self.entry.name if self.entry is not None else self.current.name

    @property
    def names(self) -> list[str]:
        """What ``/settings`` offers."""
        return self.catalog.names

    def use(self, name: str) -> str | None:
        """Switch to theme ``name`` (a name or a file); the warning when it cannot be used."""
        selection = select(self.catalog, name, self.fallback)
        self.current, self.entry = selection.theme, selection.entry
        self.changed.set()
        return selection.warning

    def watched_file(self) -> Path | None:
        """The file of the theme in use, unless it is built in."""
        if self.entry is None or self.entry.source == "builtin":
            return None
        return self.entry.path


def css_variables(theme: Theme) -> dict[str, str]:
    """Textual's colour variables the widgets' CSS uses, from ``theme``: ``$accent`` (dialog
    borders: ``border``), ``$secondary`` (the editor's border without a thinking level:
    ``borderMuted``) and ``$text-muted`` (status line, footer, completion notes: ``muted``).
    A token set to ``""`` keeps Textual's own colour.
    """
    pairs = (("accent", theme.border), ("secondary", theme.border_muted),
             ("text-muted", theme.muted))  # fmt: skip
    found: dict[str, str] = {}
    for variable, style in pairs:
        if style.color is not None:
            found[variable] = style.color.get_truecolor().hex
    return found


def default_themes() -> AppThemes:
    """The built-ins only, ``dark`` in use (an app made without :func:`start_themes`)."""
    catalog = discover_themes(ThemeSources(Path(), Path()), user=False)
    return AppThemes(catalog, select(catalog, "dark"), "dark")


def start_themes(
    request: RunRequest,
    plan: LoadPlan,
    agent_dir: Path,
    cwd: Path,
    resources: ResourceSet | None,
) -> tuple[AppThemes, list[str]]:
    """The session's themes and the warnings to show (collisions, a theme that failed)."""
    from knightcode._themes.background import detect_background

    settings = plan.settings
    plugin_paths = resources.plugin_themes if resources is not None else []
    sources = sources_for(
        agent_dir, cwd, settings, trusted=plan.trust.trusted,
        plugin_paths=plugin_paths,
    )  # fmt: skip
    catalog = discover_themes(sources, user=not request.no_themes)
    configured = settings.get("theme")
    wanted = request.theme or (configured if isinstance(configured, str) and configured else None)
    fallback = "dark"
    if wanted is None:
        fallback = detect_background()
        wanted = fallback
    selection = select(catalog, wanted, fallback)
    warnings = list(catalog.warnings)
    if selection.warning is not None:
        warnings.append(selection.warning)
    return AppThemes(catalog, selection, fallback), warnings


def reload_themes(app: KnightcodeApp, resources: ResourceSet | None) -> list[str]:
    """``/reload``: the themes found again (new files, settings ``themes``, packages, plugins)
    and the theme read again: ``--theme`` stays, else setting ``theme`` (it may have
    been edited), else the one in use; the warnings to show.
    """
    if app.plan is None or app.host.options is None:
        return []
    themes = app.theme_state
    options = app.host.options
    plugin_paths = resources.plugin_themes if resources is not None else []
    sources = sources_for(
        options.agent_dir, options.cwd, app.settings, trusted=app.plan.trust.trusted,
        plugin_paths=plugin_paths,
    )  # fmt: skip
    no_themes = app.request is not None and app.request.no_themes
    themes.catalog = discover_themes(sources, user=not no_themes)
    warnings = list(themes.catalog.warnings)
    configured = app.settings.get("theme")
    wanted = themes.name
    if app.request is not None and app.request.theme:
        wanted = app.request.theme
    elif isinstance(configured, str) and configured:
        wanted = configured
    warning = themes.use(wanted)
    if warning is not None:
        warnings.append(warning)
    app.restyle()
    return warnings


async def watch_theme_file(app: KnightcodeApp, stop: asyncio.Event) -> None:
    """Apply an edit of the theme file in use at once (only that file is watched: the OS
    reports changes, nothing is polled); a broken edit keeps the session going with the
    fallback theme and says which token is wrong.
    """
    themes = app.theme_state
    while not stop.is_set():
        themes.changed.clear()
        path = themes.watched_file()
        if path is None or not path.parent.is_dir():
            await _first(stop.wait(), themes.changed.wait())
            continue
        await _watch_one(app, path, stop)


async def _watch_one(app: KnightcodeApp, path: Path, stop: asyncio.Event) -> None:
    """Reload on changes of ``path`` until ``stop`` or until another theme is chosen."""
    from watchfiles import awatch

    either = asyncio.Event()
    relay = asyncio.ensure_future(_first(stop.wait(), app.theme_state.changed.wait()))
    relay.add_done_callback(lambda _task: either.set())
    try:
        # The folder, not the file: editors save by writing a new file and renaming it over
        # the old one. Not recursive: a theme given by path may sit in a large folder.
        async for changes in awatch(
            path.parent,
            recursive=False,
            stop_event=either,
            debounce=WATCH_DEBOUNCE_MS,
            watch_filter=lambda _change, changed: Path(changed) == path,
        ):
            if changes:
                _reload(app, path)
    finally:
        relay.cancel()


def _reload(app: KnightcodeApp, path: Path) -> None:
    themes = app.theme_state
    entry = themes.entry
    name = entry.name if entry is not None else str(path)
    warning = themes.use(str(path) if entry is None else _reread(themes, entry))
    app.restyle()
    if warning is not None:
        app.transcript.notice(warning, "warning")
    else:
        app.transcript.notice(f"Theme {name} reloaded from {path}")


def _reread(themes: AppThemes, entry: ThemeEntry) -> str:
    """The name to select again; the entry is renamed first when the file's ``name`` changed."""
    from knightcode._themes.discovery import name_of

    fresh = name_of(entry.path)
    if fresh != entry.name and themes.catalog.entry(fresh) is None:
        index = themes.catalog.entries.index(entry)
        themes.catalog.entries[index] = ThemeEntry(fresh, entry.path, entry.source)
        return fresh
    return entry.name


async def _first(*waits: Coroutine[object, object, object]) -> None:
    """Return when the first of ``waits`` is done; cancel the others."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
