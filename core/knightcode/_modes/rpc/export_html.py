"""A session as one standalone HTML page a person can read: the session viewer.

RPC ``export_html``, ``/export`` and ``knightcode --export`` all write this page. It holds the
whole session tree: a sidebar lists every branch (forks nest, the current leaf's path marked),
and the conversation shows the current branch; clicking a tree row shows the branch through it.
Entries are rendered by kind (:mod:`.export_entries`), code and tool content highlighted at
export time (:mod:`.export_highlight`), and a search box filters and marks matching entries.

Everything the session holds came from a model, a tool or a user, so every piece of text is
escaped before it reaches the page; the one inline script is a constant, allowed by its hash in
the page's Content-Security-Policy, and loads nothing. The page depends only on the session, not
on the running agent, so the same session always gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from knightcode._modes.rpc.export_assets import SCRIPT, STYLE, script_hash
from knightcode._modes.rpc.export_entries import e, render_entry, tool_calls_of
from knightcode._modes.rpc.export_highlight import HIGHLIGHT_CSS
from knightcode._modes.rpc.export_tree import render_tree

if TYPE_CHECKING:
    from knightcode._session.manager import SessionManager

__all__ = ["render_session_html"]


def _last_model(entries: list[Mapping[str, object]]) -> str:
    """The session's latest model, from its last model change or assistant answer."""
    for entry in reversed(entries):
        message = entry.get("message")
        if entry.get("type") == "model_change":
            return f"{entry.get('provider', '')}/{entry.get('modelId', '')}"
        if isinstance(message, dict) and message.get("role") == "assistant":
            return f"{message.get('provider', '')}/{message.get('model', '')}"
    return ""


def _policy() -> str:
    return (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {script_hash()}; base-uri 'none'; form-action 'none'"
    )


def render_session_html(session: SessionManager) -> str:
    """The viewer page for the whole session, showing its current branch (root to leaf)."""
    entries: list[Mapping[str, object]] = list(session.get_entries())
    path_ids = {str(entry.get("id")) for entry in session.get_branch()}
    header = session.header
    title = session.session_name or f"knightcode session {session.session_id}"
    model = _last_model(entries)
    meta = " · ".join(
        e(part)
        for part in (
            f"session {session.session_id}",
            f"started {header.get('timestamp', '')}",
            f"in {session.cwd}",
            f"{len(entries)} entries",
            *([f"model {model}"] if model else []),
        )
    )
    calls = tool_calls_of(entries)
    body = "\n".join(
        filter(
            None,
            (
                render_entry(entry, calls, hidden=str(entry.get("id")) not in path_ids)
                for entry in entries
            ),
        )
    )
    tree = render_tree(session.get_tree(), path_ids, session.leaf_id)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_policy()}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{STYLE}{HIGHLIGHT_CSS}</style></head>\n<body>"
        f'<header><h1>{e(title)}</h1><div class="meta">{meta}</div>'
        '<input id="search" type="search" placeholder="Search all branches" '
        'aria-label="Search the session"><span id="count"></span></header>\n'
        f'<div class="layout"><nav aria-label="Session tree">{tree}</nav>\n'
        f"<main>\n{body}\n</main></div>\n<script>{SCRIPT}</script>\n</body></html>\n"
    )
