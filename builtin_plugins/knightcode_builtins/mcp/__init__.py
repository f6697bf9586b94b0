"""builtin:mcp — the tools of MCP servers (Model Context Protocol), through the official SDK.

Servers come from ``<agent-dir>/mcp.json`` (``config.py``; the format other agents use). Their
tools are registered as ``mcp__<server>__<tool>`` (``tools.py``) from a cache of what each
server listed the last time it ran, so a start does not wait on servers (a list that arrives
later is added to the session, and ``/reload`` reads mcp.json again: ``live.py``); the
connections run on a background loop (``manager.py``) where a server that fails, hangs or dies
is marked failed and reported, never blocking the agent. ``/mcp`` and ``knightcode mcp list``
show servers, status, tools and errors.

Imported on every start: nothing heavy at the top, the SDK only when a server is started.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from knightcode import hookimpl

if TYPE_CHECKING:
    from knightcode import AgentStartChanges, HookContext, ImageContent

__all__: list[str] = []


@hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """Each enabled server's cached tools; servers with none start in the background.

    This hook gets no context, so the agent directory is found by the kernel's rule
    (``KNIGHTCODE_CODING_AGENT_DIR``, else ``~/.knightcode/agent``).
    """
    import os

    agent_dir = Path(os.environ.get("KNIGHTCODE_CODING_AGENT_DIR") or "~/.knightcode/agent")
    agent_dir = agent_dir.expanduser()
    if not (agent_dir / "mcp.json").exists() and not Path(".knightcode/mcp.json").exists():
        return  # no MCP configured: nothing more is imported (a start pays two stat calls)
    from .runtime import start

    _, definitions = start(agent_dir, Path.cwd())
    for definition in definitions:
        register(definition)


@hookimpl
def register_commands(register: Callable[..., None]) -> None:
    """``/mcp``: the servers, their status, tools and errors."""

    async def handler(args: str, ctx: HookContext) -> None:
        from .runtime import current, status_lines

        runtime = current()
        if runtime is None:
            text = (
                "No MCP servers configured (<agent-dir>/mcp.json, a trusted .knightcode/mcp.json)."
            )
        else:
            # A title, then every line indented under it: a notice marks only its first line.
            lines = "\n".join(status_lines(runtime)).splitlines()
            servers = len(runtime.manager.states)
            text = "\n".join([f"MCP servers ({servers}):", *(f"  {line}" for line in lines)])
        ctx.ui.notify(text, "info")

    register(name="mcp", description="MCP servers: status, tools and errors", handler=handler)


@hookimpl
def session_start(
    reason: Literal["startup", "reload", "new", "resume", "fork"],
    previous_session_file: Path | None,
    ctx: HookContext,
) -> None:
    """mcp.json errors and servers that failed at start are told once, as warnings; from now on
    tool lists that arrive late are added to the session. ``/reload`` reads mcp.json again.
    """
    if reason == "reload":
        from .live import reload

        reload(ctx)
        return
    if reason != "startup":
        return
    from .live import bind
    from .runtime import activate_project, current, project_servers

    runtime = current()
    if runtime is None:
        return
    runtime.manager.use_backend(ctx.backend)  # stdio servers run through it (the sandbox)
    if ctx.cwd.resolve() != Path.cwd().resolve():
        runtime.config_errors.append("the project's mcp.json was read from another folder")
    names = activate_project(runtime, ctx.project_trusted)
    if ctx.agent is not None and names:
        ctx.agent.set_active_tools([*ctx.agent.active_tools, *names])
    if project_servers(runtime) and not ctx.project_trusted:
        ctx.ui.notify(
            "mcp: the project's .knightcode/mcp.json is ignored: the project is not trusted "
            "('knightcode trust' to use it)",
            "warning",
        )
    for error in runtime.config_errors:
        ctx.ui.notify(f"mcp: {error}", "warning")
    from .tools import cached_failure

    for name, state in runtime.manager.states.items():
        if state.status == "failed":
            ctx.ui.notify(f"mcp: server '{name}' failed: {state.error}", "warning")
        elif state.status == "starting" and not state.config.project:
            failed = cached_failure(runtime.cache_path, state.config)
            if failed is not None:
                ctx.ui.notify(
                    f"mcp: server '{name}' failed last time ({failed}); retrying in the "
                    "background, /mcp shows how it went",
                    "warning",
                )
    bind(runtime, ctx)


@hookimpl
async def session_shutdown(
    reason: Literal["quit", "reload", "new", "resume", "fork"],
    target_session_file: Path | None,
    ctx: HookContext,
) -> None:
    """On quit the servers are stopped while the program still runs normally.

    A start still going on in the background is then cancelled cleanly, where at interpreter
    exit it would fail and be remembered as the server's failure. Other reasons keep the
    servers for the next session of this process.
    """
    if reason != "quit":
        return
    import asyncio

    from .runtime import current

    runtime = current()
    if runtime is not None:
        await asyncio.to_thread(runtime.manager.close)


@hookimpl(tryfirst=True)
async def before_agent_start(
    prompt: str, images: list[ImageContent], system_prompt: str, ctx: HookContext
) -> AgentStartChanges | None:
    """Tool lists still on their way (a server started in the background) are waited for once
    in the headless modes, so a script's run is offered their tools; first in line, so the
    prompt it returns (rebuilt to list them) is what the other handlers change. A person at the
    terminal is never kept waiting: the run goes on, and the tools join when they arrive.
    """
    from .runtime import current

    runtime = current()
    agent = ctx.agent
    if runtime is None or not runtime.pending or agent is None:
        return None
    from .live import go_on_without, wait_for_lists

    if ctx.mode == "interactive":
        go_on_without(runtime, ctx)
        return None

    before = agent.system_prompt
    await wait_for_lists(runtime, ctx)
    if agent.system_prompt == before or system_prompt != before:
        return None
    from knightcode import AgentStartChanges

    return AgentStartChanges(system_prompt=agent.system_prompt)
