"""builtin:web-tools — the web for the model: ``web_search`` (Brave) and ``web_fetch``.

* ``web_search`` (``search.py``): the Brave Search API, results as a compact markdown list;
  the key comes from ``<agent-dir>/tools.json`` (``knightcode tools set-key brave``), else
  ``BRAVE_API_KEY``.
* ``web_fetch`` (``fetch.py``): a page, PDF or text as readable markdown, with timeouts, a
  size cap and no private addresses unless tools.json allows them.
* ``config.py``: tools.json, read and validated (errors name the file and the key), written
  atomically with mode 0600; ``knightcode tools`` lists the tools and sets the key.

Switch it off with ``knightcode config disable builtin:web-tools`` or ``"-builtin:web-tools"``
in settings ``extensions``; see ``docs/web-tools.md``.

This module is imported on every start, so it imports no tool module at the top: the
definitions are built when tools are registered, and httpx is imported on the first request.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode import hookimpl

if TYPE_CHECKING:
    from knightcode import HookContext, SessionHeader

__all__: list[str] = []


@hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """``web_search`` and ``web_fetch``; both read tools.json on each call."""
    from knightcode_builtins.web_tools.fetch import web_fetch_tool
    from knightcode_builtins.web_tools.search import web_search_definition
    from knightcode_builtins.web_tools.settings import fetch_settings_for

    register(web_search_definition())
    register(web_fetch_tool(fetch_settings_for))


@hookimpl
def register_commands(register: Callable[..., None]) -> None:
    """``/tools``: the tools on and off, the Brave key, the scratchpad, gate and codemode."""
    from knightcode_builtins.web_tools.tools_command import tools_command

    register(
        name="tools",
        description="Tools on/off, the Brave key, scratchpad, gate and codemode settings",
        handler=tools_command,
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
