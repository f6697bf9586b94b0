"""builtin:mcp while a session runs: tools whose list arrives after start-up, and ``/reload``.

Start-up never waits on a server: one with no cached tool list starts in the background, and
its tools are added to the session (``ctx.agent.add_tools``) when its list arrives, with a
notice. The next run waits for lists still on their way (at most the server's timeout, once),
so a ``-p`` prompt can use a server configured a moment ago. Tool changes apply from the next
run, as every tool change does.

``/reload`` (``session_start(reason="reload")``) reads mcp.json again: servers removed, switched
off or changed are stopped and their tools removed; new ones are started (their cached tools
offered at once, or their list awaited as above).

Servers report from their own thread; everything here runs on the session's event loop (the
reports are handed over with ``call_soon_threadsafe``).
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from .config import ServerConfig, load_servers
from .runtime import Runtime, activate_project, current, start, start_servers
from .tools import definitions_for, read_cache, tool_name

if TYPE_CHECKING:
    from knightcode import HookContext

__all__ = ["ORIGIN", "bind", "reload", "wait_for_lists"]

ORIGIN = "builtin:mcp"
"""The origin of the tools this plugin adds (what ``/tools`` shows)."""


def bind(runtime: Runtime, ctx: HookContext) -> None:
    """The session exists: from now on, server reports update its tools (lists that arrived
    before it existed are applied now).
    """
    loop = asyncio.get_running_loop()

    def post(name: str) -> None:
        with suppress(RuntimeError):  # the loop closed: the process is ending
            loop.call_soon_threadsafe(apply_server, runtime, ctx, name)

    runtime.on_change = post
    for name in list(runtime.manager.states):
        apply_server(runtime, ctx, name)


def _usable(runtime: Runtime, server: ServerConfig) -> bool:
    return server.enabled and (not server.project or runtime.project_trusted)


def apply_server(runtime: Runtime, ctx: HookContext, name: str, *, quiet: bool = False) -> bool:
    """Bring the session's tools in line with what server ``name`` listed (a failed first
    start is told once); True when the tools changed.
    """
    state = runtime.manager.states.get(name)
    agent = ctx.agent
    if state is None or agent is None or not _usable(runtime, state.config):
        return False
    if state.tools is None:
        if state.status == "failed" and runtime.pending.pop(name, None) is not None:
            ctx.ui.notify(f"mcp: server '{name}' failed: {state.error}", "warning")
        return False
    runtime.pending.pop(name, None)
    old = runtime.registered.get(name, [])
    if state.tools == old:
        return False
    listed = {tool_name(name, spec.name) for spec in state.tools}
    agent.remove_tools([n for n in (tool_name(name, spec.name) for spec in old) if n not in listed])
    definitions = definitions_for(runtime, [(state.config, state.tools)])
    names = agent.add_tools(definitions, origin=ORIGIN, active=True)
    runtime.registered[name] = list(state.tools)
    if not quiet:
        shown = ", ".join(names[:8]) + (f" (+{len(names) - 8} more)" if len(names) > 8 else "")
        ctx.ui.notify(f"mcp: server '{name}' is ready: {len(names)} tools: {shown}", "info")
    return True


async def wait_for_lists(runtime: Runtime, ctx: HookContext) -> None:
    """Before a run: wait for first tool lists still on their way (each server once, at most
    its timeout, less when the user aborts), so the run is offered their tools.
    """
    waiting = {name: f for name, f in runtime.pending.items() if not f.done()}
    if waiting and ctx.agent is not None:
        limit = max(runtime.manager.states[n].config.timeout for n in waiting) + 6
        lists = asyncio.gather(*(asyncio.wrap_future(f) for f in waiting.values()))
        await ctx.agent.signal.outlast(lists, limit)  # never cancels the servers' starts
    for name in list(runtime.pending):
        apply_server(runtime, ctx, name)
        runtime.pending.pop(name, None)  # waited on once; a hanging one is not waited on again


def go_on_without(runtime: Runtime, ctx: HookContext) -> None:
    """Before an interactive run: the lists that arrived are applied; the servers still
    starting are named once, and their tools join the session when their lists arrive.
    """
    for name, future in list(runtime.pending.items()):
        if future.done():
            apply_server(runtime, ctx, name)
        elif name not in runtime.told_starting:
            # Still pending, so its failure or its tools are still told when they come.
            runtime.told_starting.add(name)
            ctx.ui.notify(
                f"mcp: server '{name}' is still starting; its tools join when it is ready "
                "(/mcp shows how it goes)",
                "info",
            )


def reload(ctx: HookContext) -> None:
    """``/reload``: read mcp.json again and bring servers and tools in line with it."""
    runtime = current()
    if runtime is None:
        if not (ctx.agent_dir / "mcp.json").exists() and not _project_file(ctx.cwd).exists():
            return
        runtime, _ = start(ctx.agent_dir, ctx.cwd)  # the first mcp.json of this session
        runtime.project_trusted = ctx.project_trusted
        first = [state.config for state in runtime.manager.states.values()]
        added = _offer_cached(runtime, ctx, first)
        activate_project(runtime, ctx.project_trusted)
        _report(runtime, ctx)
        bind(runtime, ctx)
        ctx.ui.notify(_summary([], [s for s in first if _usable(runtime, s)], added), "info")
        return
    servers, errors = load_servers(runtime.agent_dir, ctx.cwd)
    broken = [error for error in errors if not error.endswith("; ignored")]
    runtime.config_errors[:] = errors
    if broken:
        for error in broken:
            ctx.ui.notify(f"mcp: {error} (servers left as they were)", "warning")
        return
    wanted = {s.name: s for s in servers}
    states = runtime.manager.states
    gone = [name for name, state in states.items() if wanted.get(name) != state.config]
    fresh = [s for s in servers if s.name not in states or s.name in gone]
    was_trusted, runtime.project_trusted = runtime.project_trusted, ctx.project_trusted
    for name in gone:
        _drop_tools(runtime, ctx, name)
    runtime.manager.forget(gone)
    runtime.manager.add_servers(fresh)
    for server in fresh:
        runtime.registered[server.name] = read_cache(runtime.cache_path, server) or []
    added = _offer_cached(runtime, ctx, fresh)
    start_servers(runtime, [s for s in fresh if _usable(runtime, s)])
    if runtime.project_trusted and not was_trusted and ctx.agent is not None:
        known = {info.name for info in ctx.agent.available_tools()}
        names = [n for n in activate_project(runtime, True) if n in known]
        ctx.agent.set_active_tools([*ctx.agent.active_tools, *names])
    _report(runtime, ctx)
    if gone or fresh:
        ctx.ui.notify(_summary(gone, [s for s in fresh if _usable(runtime, s)], added), "info")


def _offer_cached(runtime: Runtime, ctx: HookContext, servers: list[ServerConfig]) -> list[str]:
    """Offer the cached tools of these servers (the usable ones) at once; their names."""
    usable = [s for s in servers if _usable(runtime, s)]
    tools = [(s, runtime.registered.get(s.name, [])) for s in usable]
    if ctx.agent is None or not tools:
        return []
    return ctx.agent.add_tools(definitions_for(runtime, tools), origin=ORIGIN, active=True)


def _drop_tools(runtime: Runtime, ctx: HookContext, name: str) -> None:
    specs = runtime.registered.pop(name, [])
    runtime.pending.pop(name, None)
    if ctx.agent is not None:
        ctx.agent.remove_tools([tool_name(name, spec.name) for spec in specs])


def _summary(gone: list[str], started: list[ServerConfig], added: list[str]) -> str:
    parts = []
    if gone:
        parts.append(f"stopped {', '.join(gone)}")
    if started:
        parts.append(f"added {', '.join(s.name for s in started)}")
    text = "mcp: mcp.json reloaded: " + "; ".join(parts)
    return text + (f" ({len(added)} cached tools offered)" if added else "")


def _report(runtime: Runtime, ctx: HookContext) -> None:
    for error in runtime.config_errors:
        ctx.ui.notify(f"mcp: {error}", "warning")


def _project_file(cwd: Path) -> Path:
    return cwd / ".knightcode" / "mcp.json"
