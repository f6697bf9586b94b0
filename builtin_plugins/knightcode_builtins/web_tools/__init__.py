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

import importlib
import importlib.util
from collections.abc import Callable

from knightcode import hookimpl

__all__: list[str] = []


@hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """``web_search`` and, once its module is there, ``web_fetch``."""
    from knightcode_builtins.web_tools.search import web_search_definition

    register(web_search_definition())
    # --- web_fetch (the fetch part's module, knightcode_builtins.web_tools.fetch) ------------
    # TODO(h14 merge): once fetch.py is merged, replace these lines with the typed form in
    # /work/h14-search-report.md ("Merge snippet"): web_fetch_tool(settings_for) reading
    # tools.json on each call. Until then the plugin offers web_fetch with its defaults when the
    # module is there, and web_search alone otherwise; the look-up costs no import.
    if importlib.util.find_spec("knightcode_builtins.web_tools.fetch") is not None:
        fetch = importlib.import_module("knightcode_builtins.web_tools.fetch")
        factory: object = getattr(fetch, "web_fetch_tool", None)
        if callable(factory):
            register(factory())
