"""The interactive session's file watcher: a change to what ``/reload`` reads runs ``/reload``.

Watched: the agent directory (extensions, ``skills/``, ``prompts/``, ``mcp.json``, settings,
installed packages), the project's ``.knightcode/``, extension paths, settings files, the
``skills``/``prompts`` settings' folders and ``.agents/skills`` (home and project). Only files
that matter trigger it (Python sources, ``.md`` files, ``settings.json``, ``mcp.json``; never
bytecode, sessions, logs or the MCP tool cache), changes are debounced into one batch, and the
reload waits until the agent is idle: an editor saving a file many times costs one reload, and
nothing is rescanned between changes (the OS reports them; see ``watchfiles``).

Off unless settings ``autoReload`` is true: knightcode itself writes settings.json (``/model``
saves the default), and a reload notice after each of those would be noise for most users.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._plugins.reload import is_relevant_change, watch_paths

if TYPE_CHECKING:
    from knightcode._config.loading import Settings
    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._plugins.host import PluginHost

__all__ = ["is_resource_change", "resource_paths", "watch_and_reload", "watch_resources"]

DEBOUNCE_MS = 300


def is_resource_change(path: str) -> bool:
    """Plugin sources and settings (as for plugins), skills and templates (``.md``) and
    ``mcp.json``; not bytecode, sessions, logs or caches.
    """
    if "__pycache__" in path:
        return False
    return is_relevant_change(path) or path.endswith(".md") or Path(path).name == "mcp.json"


def resource_paths(host: PluginHost, settings: Settings, home: Path | None = None) -> list[Path]:
    """The existing folders and files whose changes matter, none inside another one."""
    paths = watch_paths(host)
    options = host.options
    if options is not None:
        for key in ("skills", "prompts"):
            paths += [_expand(entry, base) for entry, base in settings.path_entries(key)]
        paths += [(home or Path.home()) / ".agents" / "skills", options.cwd / ".agents" / "skills"]
    return _outermost(path for path in paths if path.exists())


def _expand(entry: str, base: Path) -> Path:
    from knightcode._config.paths import expand_path

    return expand_path(entry, base)


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """Each path once, leaving out those inside another (watches are recursive)."""
    unique = sorted({path.resolve() for path in paths}, key=lambda p: (len(p.parts), str(p)))
    kept: list[Path] = []
    for path in unique:
        if not any(path.is_relative_to(outer) for outer in kept if outer.is_dir()):
            kept.append(path)
    return kept


async def watch_resources(
    paths: Callable[[], list[Path]],
    on_change: Callable[[set[str]], Awaitable[None]],
    stop: asyncio.Event,
    debounce_ms: int = DEBOUNCE_MS,
) -> None:
    """Call ``on_change`` with the changed files of each debounced batch, until ``stop``.

    ``paths`` is asked again after each batch (a reload can add folders: a new ``skills``
    setting), and the watch restarts when the answer differs.
    """
    from watchfiles import awatch

    watched = paths()
    while watched and not stop.is_set():
        try:
            async for changes in awatch(
                *watched,
                stop_event=stop,
                debounce=debounce_ms,
                watch_filter=lambda _change, path: is_resource_change(path),
            ):
                if changes:
                    await on_change({path for _change, path in changes})
                fresh = paths()
                if fresh != watched:
                    watched = fresh
                    break
            else:
                return  # stopped
        except OSError:  # a watched folder went away: watch what is there now
            await asyncio.sleep(debounce_ms / 1000)
            watched = paths()


async def watch_and_reload(app: KnightcodeApp, stop: asyncio.Event) -> None:
    """The interactive session's watcher: each batch of changes runs ``/reload`` once the
    agent is idle.
    """
    from knightcode._modes.interactive.reload import reload_everything

    async def reload(changed: set[str]) -> None:
        await app.agent.wait_idle()
        try:
            await reload_everything(app)
        except Exception as error:  # a broken file must not end the watching
            app.transcript.notice(f"Reload after a file change failed: {error}", "warning")

    await watch_resources(lambda: resource_paths(app.host, app.settings), reload, stop)
