"""Hot reload: edits, additions, removals, broken edits, settings changes, and the watcher."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from knightcode._plugins.host import PluginFailure, PluginHost
from knightcode._plugins.records import PluginStatus
from knightcode._plugins.reload import ReloadReport, reload_extensions, watch

from .conftest import recorder_plugin, write


async def calls_after_start(host: PluginHost, project_dir: Path) -> list[str]:
    log = project_dir / "calls.log"
    log.unlink(missing_ok=True)
    await host.hooks.session_start(reason="reload", previous_session_file=None)
    return log.read_text().split() if log.exists() else []


async def test_reload_picks_up_edits_additions_and_removals(
    agent_dir: Path, project_dir: Path, make_host: Callable[..., PluginHost]
) -> None:
    ext = agent_dir / "extensions"
    edited = write(ext / "a.py", recorder_plugin("a-v1"))
    removed = write(ext / "b.py", recorder_plugin("b"))
    untouched = write(ext / "c.py", recorder_plugin("c"))
    host = make_host()
    c_module = host.record(f"ext:{untouched.resolve()}").plugin  # type: ignore[union-attr]
    assert await calls_after_start(host, project_dir) == ["a-v1", "b", "c"]

    write(edited, recorder_plugin("a-v2-longer"))
    removed.unlink()
    write(ext / "d.py", recorder_plugin("d"))
    report = reload_extensions(host)

    assert report.reloaded == [f"ext:{edited.resolve()}"]
    assert report.unloaded == [f"ext:{removed.resolve()}"]
    assert report.loaded == [f"ext:{(ext / 'd.py').resolve()}"]
    assert await calls_after_start(host, project_dir) == ["a-v2-longer", "c", "d"]
    assert host.record(f"ext:{untouched.resolve()}").plugin is c_module  # type: ignore[union-attr]
    assert [r.order for r in host.records] == [0, 1, 2]


async def test_a_broken_edit_is_reported_and_the_others_keep_working(
    agent_dir: Path,
    project_dir: Path,
    make_host: Callable[..., PluginHost],
    failures: list[PluginFailure],
) -> None:
    ext = agent_dir / "extensions"
    broken = write(ext / "a.py", recorder_plugin("a"))
    write(ext / "b.py", recorder_plugin("b"))
    host = make_host()
    write(broken, "def oops(:\n")
    report = reload_extensions(host)
    assert report.failed == [f"ext:{broken.resolve()}"]
    assert failures[-1].event == "load" and "SyntaxError" in failures[-1].error
    assert await calls_after_start(host, project_dir) == ["b"]

    write(broken, recorder_plugin("a-fixed"))
    report = reload_extensions(host)
    assert report.loaded == [f"ext:{broken.resolve()}"]
    assert await calls_after_start(host, project_dir) == ["a-fixed", "b"]


async def test_reload_applies_settings_changes(
    agent_dir: Path, project_dir: Path, make_host: Callable[..., PluginHost]
) -> None:
    path = write(agent_dir / "extensions" / "a.py", recorder_plugin("a"))
    host = make_host()
    (agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-ext:a"]}))
    report = reload_extensions(host)
    assert report.unloaded == [f"ext:{path.resolve()}"]
    assert host.records[0].status is PluginStatus.DISABLED
    assert await calls_after_start(host, project_dir) == []

    (agent_dir / "settings.json").write_text("{}")
    report = reload_extensions(host)
    assert report.loaded == [f"ext:{path.resolve()}"]
    assert await calls_after_start(host, project_dir) == ["a"]


async def test_registrations_follow_reloads(
    agent_dir: Path, make_host: Callable[..., PluginHost]
) -> None:
    source = """
    from knightcode import hookimpl

    @hookimpl
    def register_commands(register):
        register(name={name!r}, handler=print)
    """
    path = write(agent_dir / "extensions" / "cmds.py", source.format(name="one"))
    host = make_host()
    assert host.registrations.commands.names() == ["one"]
    write(path, source.format(name="two-renamed"))
    reload_extensions(host)
    assert host.registrations.commands.names() == ["two-renamed"]


async def test_watch_reloads_when_a_file_changes(
    agent_dir: Path, project_dir: Path, make_host: Callable[..., PluginHost]
) -> None:
    path = write(agent_dir / "extensions" / "a.py", recorder_plugin("before"))
    host = make_host()
    stop = asyncio.Event()
    reports: list[ReloadReport] = []

    def on_reload(report: ReloadReport) -> None:
        reports.append(report)
        stop.set()

    watcher = asyncio.create_task(watch(host, on_reload, stop, debounce_ms=50))
    await asyncio.sleep(0.3)  # let the watcher start before the edit
    write(path, recorder_plugin("after-edit"))
    await asyncio.wait_for(watcher, timeout=10)
    assert reports and reports[0].reloaded == [f"ext:{path.resolve()}"]
    assert await calls_after_start(host, project_dir) == ["after-edit"]
