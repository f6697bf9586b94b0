"""builtin:web-tools — the web for the model: ``web_search`` (Brave) and ``web_fetch``.

* ``web_search`` (``search.py``): the Brave Search API, results as a compact markdown list;
  the key comes from ``<agent-dir>/tools.json`` (``knightcode tools set-key brave``), else
  ``BRAVE_API_KEY``.
* ``web_fetch`` (``fetch.py``): a page, PDF or text as readable markdown, with timeouts, a
  size cap and no private addresses unless tools.json allows them.
* ``code`` (``codemode/``): with tools.json ``codemode.enabled`` or ``--codemode``, the model is
  offered only ``code``, a Python script calling the other tools as functions in one step.
* the classifier gate (``gate.py``, off by default): tool calls matching ``gate.patterns`` and
  the text of web results are judged by a classifier model before they run or enter the context.
* ``config.py``: tools.json, read and validated (errors name the file and the key), written
  atomically with mode 0600; ``knightcode tools`` lists the tools and sets the key.

Switch it off with ``knightcode config disable builtin:web-tools`` or ``"-builtin:web-tools"``
in settings ``extensions``; see ``docs/web-tools.md``.

This module is imported on every start, so it imports no tool module at the top: the
definitions are built when tools are registered, and httpx is imported on the first request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from knightcode import hookimpl

if TYPE_CHECKING:
    from knightcode import (
        AgentStartChanges,
        Block,
        HookContext,
        ImageContent,
        SessionHeader,
        ToolResultContent,
        ToolResultPatch,
    )

__all__: list[str] = []


@hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """``web_search``, ``web_fetch`` and ``code`` (offered only in codemode); they read
    tools.json on each call.
    """
    # definitions.py only: the modules behind the tools load on their first call.
    from knightcode_builtins.web_tools.definitions import (
        code_definition,
        web_fetch_definition,
        web_search_definition,
    )
    from knightcode_builtins.web_tools.settings import fetch_settings_for

    register(web_search_definition())
    register(web_fetch_definition(fetch_settings_for))
    register(code_definition())


@hookimpl
def register_flags(register: Callable[..., None]) -> None:
    """``--codemode``."""
    register(
        name="codemode",
        type="boolean",
        default=False,
        description=(
            "Offer the model only the 'code' tool: Python scripts that call the other tools as "
            "functions (tools.json codemode.enabled switches it on for every run)."
        ),
    )


@hookimpl
def session_start(
    reason: Literal["startup", "reload", "new", "resume", "fork"],
    previous_session_file: Path | None,
    ctx: HookContext,
) -> None:
    """Codemode on: only ``code`` is offered (its functions are the tools that were)."""
    from knightcode_builtins.web_tools.codemode.enable import sync_codemode

    sync_codemode(ctx)


@hookimpl
def before_agent_start(
    prompt: str, images: list[ImageContent], system_prompt: str, ctx: HookContext
) -> AgentStartChanges | None:
    """Codemode: the system prompt lists the functions ``code`` scripts can call."""
    agent = ctx.agent
    if agent is None or "code" not in agent.active_tools:
        return None
    from knightcode import AgentStartChanges
    from knightcode_builtins.web_tools.codemode.enable import codemode_prompt

    section = codemode_prompt(ctx)
    return AgentStartChanges(system_prompt=f"{system_prompt}\n\n{section}") if section else None


@hookimpl
def register_commands(register: Callable[..., None]) -> None:
    """``/tools``: the tools on and off, the Brave key, the scratchpad, gate and codemode."""

    async def handler(args: str, ctx: HookContext) -> None:
        # The menu's module (and tools.json's) loads when /tools is used, not at every start.
        from knightcode_builtins.web_tools.tools_command import tools_command

        await tools_command(args, ctx)

    register(
        name="tools",
        description="Tools on/off, the Brave key, scratchpad, gate and codemode settings",
        handler=handler,
    )


# --- the scratchpad goes with its session -------------------------------------------------------


@hookimpl
def session_delete(session_file: Path, header: SessionHeader | None, ctx: HookContext) -> None:
    """A deleted session's scratchpads: beside its file, and in its project (sandbox)."""
    from knightcode_builtins.web_tools.scratchpad import remove_scratchpads, session_scratchpads

    session_id = header.get("id") if header is not None else None
    cwd = header.get("cwd") if header is not None else None
    remove_scratchpads(session_scratchpads(session_file, session_id, cwd))


@hookimpl
def session_shutdown(reason: str, target_session_file: Path | None, ctx: HookContext) -> None:
    """A session kept only in memory (``--no-session``) cannot be resumed: its scratchpad is
    of no use once it is left. A saved session keeps its scratchpad until it is deleted.
    """
    session = ctx.session
    if reason == "reload" or session is None or session.session_file is not None:
        return  # a reload goes on with the same session
    from knightcode_builtins.web_tools.scratchpad import remove_scratchpads, session_scratchpads

    remove_scratchpads(session_scratchpads(None, session.session_id, str(ctx.cwd)))


# --- the classifier gate ---------------------------------------------------------------------


@hookimpl
def tool_call(
    tool_call_id: str, tool_name: str, input: dict[str, object], ctx: HookContext
) -> Awaitable[Block | None] | None:
    """The classifier gate on tool calls. Off (the default), this is one ``stat`` of tools.json;
    a tools.json too broken to tell raises, which blocks the call with the file's error.
    """
    from knightcode_builtins.web_tools.gate_state import gate_of

    gate = gate_of(ctx.agent_dir)
    if gate is None:
        return None
    from knightcode_builtins.web_tools.gate import check_call

    return check_call(gate, tool_call_id, tool_name, input, ctx)


@hookimpl
def tool_result(
    tool_call_id: str,
    tool_name: str,
    input: dict[str, object],
    content: list[ToolResultContent],
    details: object,
    is_error: bool,
    ctx: HookContext,
) -> Awaitable[ToolResultPatch | None] | None:
    """The classifier gate on the text of web results, before it enters the context."""
    from knightcode_builtins.web_tools.gate_state import GateUnreadable, gate_of

    if is_error:
        return None  # an error's patches are ignored; its text is the tool's own message
    try:
        gate = gate_of(ctx.agent_dir)
    except GateUnreadable as exc:  # a raise here would be reported and the content let through
        from knightcode_builtins.web_tools.gate import block_result
        from knightcode_builtins.web_tools.gate_config import DEFAULT_CONTENT_TOOLS

        if tool_name not in DEFAULT_CONTENT_TOOLS:
            return None
        return block_result(tool_name, str(exc), details, ctx)
    if gate is None or tool_name not in gate.content.tools:
        return None
    from knightcode_builtins.web_tools.gate import check_result

    return check_result(gate, tool_call_id, tool_name, input, content, details, ctx)
