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

from knightcode import hookimpl

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
