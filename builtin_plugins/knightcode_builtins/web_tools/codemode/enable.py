"""Codemode on and off: which tools the model is offered, and which a script may call.

On (tools.json ``codemode.enabled`` or ``--codemode``), the session's active tools are replaced
by ``code`` alone, and the tools that were active become the functions of its scripts. Off,
``code`` is not offered (it is registered with ``default_active=False``) unless someone switches
it on.

The tools a script may call are remembered per agent session (a session switch — ``/new``,
resume, fork — keeps the agent, and so the list). A session where someone switched ``code`` on
by hand, without codemode, lets scripts call the other active tools.

The functions are listed for the model in the system prompt (``before_agent_start``), built from
each tool's JSON schema; a tool's description in a request cannot change once registered.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from knightcode import AgentHandle, HookContext, ToolContext, ToolDefinition

__all__ = ["CODE", "callable_tools", "codemode_prompt", "sync_codemode"]

CODE = "code"
_CALLABLE: weakref.WeakKeyDictionary[AgentHandle, tuple[str, ...]] = weakref.WeakKeyDictionary()


def _wanted(ctx: HookContext) -> bool:
    """``--codemode``, else tools.json (a broken file is reported and counts as off)."""
    if ctx.flags.get("codemode"):
        return True
    # Every session start asks; a tools.json that never mentions codemode (or none at all)
    # answers without importing and validating the whole file.
    try:
        text = (ctx.agent_dir / "tools.json").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    if "codemode" not in text:
        return False
    from ..config import ToolsConfigError, load_tools_config

    try:
        return load_tools_config(ctx.agent_dir).codemode.enabled
    except ToolsConfigError as error:
        ctx.ui.notify(f"codemode stays off: {error}", "warning")
        return False


def sync_codemode(ctx: HookContext, *, announce: bool = False) -> None:
    """Codemode as ``--codemode`` and tools.json say now: at each session start, and when
    ``/tools`` flips ``codemode.enabled`` (then from the next request, like any tool switch).

    Switched on, the active tools are remembered as the script's functions and ``code`` alone
    is offered; switched off, they are offered again (with any switched on meanwhile). While
    it stays on, tools switched by hand stay as they are.

    :param announce: tell the user what changed (a ``/tools`` switch, not a start)
    """
    agent = ctx.agent
    if agent is None:
        return
    saved = _CALLABLE.get(agent)
    if _wanted(ctx):
        active = agent.active_tools
        if saved is not None or not active:  # on already; --no-tools: not even code
            return
        _CALLABLE[agent] = tuple(name for name in active if name != CODE)
        agent.set_active_tools([CODE])
        message = "codemode on: the model is offered only `code` from the next request"
    elif saved is not None:
        del _CALLABLE[agent]
        available = {info.name for info in agent.available_tools()}
        extra = [name for name in agent.active_tools if name != CODE and name not in saved]
        agent.set_active_tools([name for name in (*saved, *extra) if name in available])
        message = "codemode off: the model is offered the tools again from the next request"
    else:
        return
    if announce:
        ctx.ui.notify(message, "info")


def _callable_names(agent: AgentHandle | None) -> tuple[str, ...] | None:
    if agent is None:
        return None
    names = _CALLABLE.get(agent)
    return names if names is not None else tuple(n for n in agent.active_tools if n != CODE)


def callable_tools(ctx: ToolContext) -> dict[str, ToolDefinition]:
    """The tools a ``code`` script run in ``ctx`` may call, by name."""
    reachable: Mapping[str, ToolDefinition] = ctx.callable_tools()
    names = _callable_names(ctx.context.agent if ctx.context is not None else None)
    if names is None:  # no session: whatever the loop can reach
        names = tuple(reachable)
    return {name: reachable[name] for name in names if name in reachable and name != CODE}


def codemode_prompt(ctx: HookContext) -> str | None:
    """The system prompt section listing the script functions, when ``code`` is offered."""
    agent = ctx.agent
    if agent is None or CODE not in agent.active_tools:
        return None
    from .functions import describe_functions, function_spec

    names = _callable_names(agent) or ()
    infos = {info.name: info for info in agent.available_tools()}
    listed = [infos[name] for name in names if name in infos and name != CODE]
    specs = [
        (function_spec(info.name, info.description, info.parameters), info.parameters)
        for info in listed
    ]
    return (
        "## Codemode functions\n\n"
        "Scripts run by the `code` tool can call these functions (each returns the tool's "
        "text and raises ToolError when the tool fails):\n\n"
        f"{describe_functions(specs)}"
    )
