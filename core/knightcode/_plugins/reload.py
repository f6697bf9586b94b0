"""Hot reload of extensions, and watching their folders and the settings for changes.

A reload re-runs discovery (settings and project trust are read again), then unloads plugins
that disappeared or became blocked, re-imports extensions whose source files changed, and loads
new ones. Plugins that did not change keep running untouched; one whose edit is broken is
reported and left unloaded while every other plugin keeps its last good version.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode._plugins.loader import source_stamp
from knightcode._plugins.planning import LoadPlan, make_plan
from knightcode._plugins.records import PluginKind, PluginRecord, PluginStatus

if TYPE_CHECKING:
    from knightcode._plugins.host import PluginHost


@dataclass
class ReloadReport:
    """What a reload changed, by plugin name."""

    loaded: list[str] = field(default_factory=list)
    reloaded: list[str] = field(default_factory=list)
    unloaded: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.loaded or self.reloaded or self.unloaded or self.failed)


def _needs_reload(record: PluginRecord) -> bool:
    if record.status is not PluginStatus.LOADED:
        return True
    return (
        record.kind.is_extension
        and record.path is not None
        and source_stamp(record.path) != record.stamp
    )


def reload_extensions(host: PluginHost, plan: LoadPlan | None = None) -> ReloadReport:
    """Bring the host in line with what discovery finds now; see the module docstring."""
    if host.options is None:
        raise RuntimeError("this host was not built from HostOptions; nothing to re-discover")
    plan = plan or make_plan(host.options)
    wanted = {candidate.name: candidate for candidate in plan.candidates}
    report = ReloadReport()
    for record in list(host.records):
        was_loaded = record.status is PluginStatus.LOADED
        if record.name not in wanted:
            host.unload(record.name)
            if was_loaded:
                report.unloaded.append(record.name)
        elif _needs_reload(record):
            host.unload(record.name)
            fresh = host.load_candidate(wanted[record.name])
            if fresh.status is PluginStatus.LOADED:
                (report.reloaded if was_loaded else report.loaded).append(record.name)
            else:
                report.failed.append(record.name)
    for name, candidate in wanted.items():
        if host.record(name) is None:
            fresh = host.load_candidate(candidate)
            (report.loaded if fresh.status is PluginStatus.LOADED else report.failed).append(name)
    for candidate in plan.found:
        if candidate.name in plan.blocked and host.record(candidate.name) is None:
            host.add_record(
                PluginRecord(
                    candidate.name,
                    candidate.kind,
                    candidate.source,
                    0,
                    PluginStatus.DISABLED,
                    path=candidate.path,
                )
            )
    host.sort_records([candidate.name for candidate in plan.found])
    host.warnings[:] = plan.warnings
    if host.context is not None:
        host.context.reload_settings(plan.settings)
    return report


def watch_paths(host: PluginHost) -> list[Path]:
    """The folders and files whose changes can change the loaded plugins."""
    options = host.options
    if options is None:
        return []
    paths = [options.agent_dir, options.cwd / ".knightcode", *options.extension_paths]
    paths += [
        record.path
        for record in host.records
        if record.path is not None and record.kind is PluginKind.SETTINGS
    ]
    unique: list[Path] = []
    for path in paths:
        if path.exists() and path not in unique:
            unique.append(path)
    return unique


def is_relevant_change(path: str) -> bool:
    """Python sources and settings files matter; bytecode, sessions and logs do not."""
    return "__pycache__" not in path and (path.endswith(".py") or path.endswith("settings.json"))


async def watch(
    host: PluginHost,
    on_reload: Callable[[ReloadReport], object] | None = None,
    stop: asyncio.Event | None = None,
    debounce_ms: int = 200,
) -> None:
    """Reload whenever an extension or settings file changes, until ``stop`` is set.

    ``on_reload`` receives each :class:`ReloadReport` that changed something.
    """
    from watchfiles import awatch

    paths = watch_paths(host)
    if not paths:
        return
    async for changes in awatch(
        *paths,
        stop_event=stop,
        debounce=debounce_ms,
        watch_filter=lambda _change, path: is_relevant_change(path),
    ):
        if not changes:
            continue
        report = reload_extensions(host)
        if report.changed and on_reload is not None:
            result = on_reload(report)
            if asyncio.iscoroutine(result):
                await result
