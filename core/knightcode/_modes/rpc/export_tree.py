"""The session tree as the exported page's sidebar: every branch, the current one marked.

A session is a tree (forks, ``/tree`` navigation), usually one long chain with a few forks, so
nesting one level per entry would make a 10,000-deep list. Instead a chain of single children is
one flat list (a *branch*), and only a fork nests: each child of a fork starts a sub-branch in a
collapsible ``<details>``, open when it holds the current leaf's path. Each row carries its entry
id and its parent's, which is all the page's script needs to show any branch. Built with an
explicit stack: a damaged or huge file must not hit Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Mapping

from knightcode._modes.rpc.export_entries import e
from knightcode._session.tree import SessionTreeNode

__all__ = ["render_tree", "row_label"]

_SNIPPET = 60
_KINDS = {
    "compaction": "compaction",
    "branch_summary": "branch summary",
    "model_change": "model",
    "thinking_level_change": "thinking level",
    "custom_message": "plugin message",
    "custom": "plugin state",
    "label": "label",
    "session_info": "session name",
    "context_edit": "context edit",
}


def _first_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    return str(block["text"])
                if block.get("type") == "toolCall":
                    return f"→ {block.get('name', '?')}"
    return ""


def row_label(entry: Mapping[str, object]) -> tuple[str, str]:
    """(kind, snippet) naming an entry in the tree."""
    kind = str(entry.get("type", "?"))
    message = entry.get("message")
    if kind == "message" and isinstance(message, dict):
        role = str(message.get("role", "?"))
        if role == "toolResult":
            return "result", str(message.get("toolName", ""))
        if role == "bashExecution":
            text = str(message.get("command", ""))
        else:
            text = _first_text(message.get("content"))
        kind = role
    elif kind in ("compaction", "branch_summary"):
        text = str(entry.get("summary", ""))
    elif kind == "model_change":
        text = f"{entry.get('provider', '')}/{entry.get('modelId', '')}"
    elif kind == "thinking_level_change":
        text = str(entry.get("thinkingLevel", ""))
    elif kind in ("label", "session_info"):
        text = str(entry.get("label") or entry.get("name") or "")
    else:
        text = ""
    snippet = " ".join(text.split())
    if len(snippet) > _SNIPPET:
        snippet = snippet[: _SNIPPET - 1] + "…"
    return _KINDS.get(kind, kind), snippet


def _row(entry: Mapping[str, object], path_ids: set[str], leaf_id: str | None) -> str:
    entry_id = str(entry.get("id", ""))
    parent = entry.get("parentId")
    kind, snippet = row_label(entry)
    css = (
        "row"
        + (" onpath" if entry_id in path_ids else "")
        + (" leaf" if entry_id == leaf_id else "")
    )
    parent_attr = f' data-parent="{e(parent)}"' if isinstance(parent, str) and parent else ""
    return (
        f'<li class="{css}" data-id="{e(entry_id)}"{parent_attr}>'
        f'<a href="#e-{e(entry_id)}"><span class="k">{e(kind)}</span> {e(snippet)}</a></li>'
    )


def render_tree(roots: list[SessionTreeNode], path_ids: set[str], leaf_id: str | None) -> str:
    """The ``<ul>`` of branches for the sidebar."""
    out: list[str] = ['<ul class="branches">']
    work: list[SessionTreeNode | None] = list(reversed(roots))
    while work:
        node = work.pop()
        if node is None:  # the end of a branch opened earlier
            out.append("</ul></details></li>")
            continue
        chain = [node]
        while len(chain[-1].children) == 1:
            chain.append(chain[-1].children[0])
        forks = chain[-1].children
        on_path = str(node.entry.get("id", "")) in path_ids
        count = f"{len(chain)} entr{'y' if len(chain) == 1 else 'ies'}"
        forked = f" · {len(forks)} branches" if forks else ""
        out.append(
            f'<li class="branch"><details{" open" if on_path else ""}>'
            f'<summary>{count}{forked}</summary><ol class="rows">'
        )
        out.extend(_row(item.entry, path_ids, leaf_id) for item in chain)
        out.append('</ol><ul class="branches">')
        work.append(None)
        work.extend(reversed(forks))
    out.append("</ul>")
    return "".join(out)
