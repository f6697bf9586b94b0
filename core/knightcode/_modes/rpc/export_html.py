"""A session's current branch as one standalone HTML page a person can read.

Everything the session holds came from a model, a tool or a user, so every piece of text is
escaped (``html.escape`` with quotes) before it reaches the page; images are embedded only when
their MIME type is a known image type and their data is plain base64, so a crafted message
cannot smuggle markup or script through an attribute. The page has no external resources.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._session.manager import SessionManager

__all__ = ["render_session_html"]

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}\Z")

STYLE = (
    "\n"
    "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;"
    "color:#1d1d1f;background:#fafafa}\n"
    "h1{font-size:1.4rem;margin-bottom:.2rem}"
    ".meta{color:#666;font-size:.85rem;margin-bottom:1.5rem}\n"
    ".entry{border-radius:8px;padding:.6rem .9rem;margin:.8rem 0;background:#fff;"
    "border:1px solid #e3e3e3}\n"
    ".role{font-size:.75rem;font-weight:600;text-transform:uppercase;letter-spacing:.05em;"
    "color:#666}\n"
    ".user{border-left:4px solid #2f6fde}.assistant{border-left:4px solid #2a9d55}"
    ".toolResult{border-left:4px solid #a0a0a0}\n"
    ".bashExecution{border-left:4px solid #b7791f}.summary{border-left:4px solid #8a5cd6}"
    ".custom{border-left:4px solid #d65c8a}\n"
    ".error{border-left:4px solid #d33}.note{color:#777;font-size:.8rem;margin:.3rem 0}\n"
    "pre{white-space:pre-wrap;word-break:break-word;margin:.3rem 0;"
    "font:13px/1.45 ui-monospace,monospace}\n"
    ".text{font:inherit}details{margin:.3rem 0}summary{cursor:pointer;color:#555}"
    "img{max-width:100%}\n"
)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _pre(text: str, css: str = "") -> str:
    return f'<pre class="{css}">{_e(text)}</pre>' if css else f"<pre>{_e(text)}</pre>"


def _image(block: Mapping[str, object]) -> str:
    mime, data = block.get("mimeType"), block.get("data")
    if mime in _IMAGE_TYPES and isinstance(data, str) and _BASE64.match(data):
        return f'<img alt="image" src="data:{_e(mime)};base64,{_e(data)}">'
    return '<p class="note">[image]</p>'


def _blocks(content: object) -> str:
    """Text, image, thinking and tool-call blocks (or a plain string)."""
    if isinstance(content, str):
        return _pre(content, "text")
    parts: list[str] = []
    blocks: list[object] = content if isinstance(content, list) else []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(_pre(str(block.get("text", "")), "text"))
        elif kind == "image":
            parts.append(_image(block))
        elif kind == "thinking":
            thinking = _pre(str(block.get("thinking", "")))
            parts.append(f"<details><summary>thinking</summary>{thinking}</details>")
        elif kind == "toolCall":
            arguments = json.dumps(block.get("arguments"), ensure_ascii=False, indent=2)
            name, call_id = _e(block.get("name", "?")), _e(block.get("id", ""))
            parts.append(
                f'<p class="note">tool call <code>{name}</code> ({call_id})</p>{_pre(arguments)}'
            )
    return "".join(parts)


def _entry(css: str, role: str, body: str) -> str:
    return f'<section class="entry {_e(css)}"><div class="role">{_e(role)}</div>{body}</section>'


def _message(message: Mapping[str, object]) -> str:
    role = str(message.get("role", "?"))
    if role == "assistant":
        body = _blocks(message.get("content"))
        model = f"{message.get('provider', '')}/{message.get('model', '')}"
        note = f"{model} · {message.get('stopReason', '')}"
        if message.get("errorMessage"):
            body += _pre(f"Error: {message['errorMessage']}")
        css = "error" if message.get("stopReason") in ("error", "aborted") else "assistant"
        return _entry(css, "assistant", body + f'<p class="note">{_e(note)}</p>')
    if role == "toolResult":
        label = f"tool result · {message.get('toolName', '?')}" + (
            " · error" if message.get("isError") else ""
        )
        return _entry("toolResult", label, _blocks(message.get("content")))
    if role == "bashExecution":
        body = _pre(f"$ {message.get('command', '')}") + _pre(str(message.get("output", "")))
        status = "cancelled" if message.get("cancelled") else f"exit code {message.get('exitCode')}"
        return _entry("bashExecution", "shell", body + f'<p class="note">{_e(status)}</p>')
    if role == "custom":
        return _entry(
            "custom",
            f"plugin message · {message.get('customType', '')}",
            _blocks(message.get("content")),
        )
    return _entry("user" if role == "user" else "custom", role, _blocks(message.get("content")))


def _render_entry(entry: Mapping[str, object]) -> str:
    kind = entry.get("type")
    message = entry.get("message")
    if kind == "message" and isinstance(message, dict):
        return _message(message)
    if kind == "compaction":
        return _entry("summary", "compaction summary", _pre(str(entry.get("summary", "")), "text"))
    if kind == "branch_summary":
        return _entry("summary", "branch summary", _pre(str(entry.get("summary", "")), "text"))
    if kind == "custom_message" and entry.get("display", True):
        return _entry(
            "custom",
            f"plugin message · {entry.get('customType', '')}",
            _blocks(entry.get("content")),
        )
    if kind == "model_change":
        model = f"{_e(entry.get('provider', ''))}/{_e(entry.get('modelId', ''))}"
        return f'<p class="note">model: {model}</p>'
    if kind == "thinking_level_change":
        return f'<p class="note">thinking level: {_e(entry.get("thinkingLevel", ""))}</p>'
    return ""  # plugin state, labels, session names and context edits are not conversation


def render_session_html(session: SessionManager, model: str) -> str:
    """The page for the session's current branch (root to leaf)."""
    header = session.header
    title = session.session_name or f"knightcode session {session.session_id}"
    meta = " · ".join(
        _e(part)
        for part in (
            f"session {session.session_id}",
            f"started {header.get('timestamp', '')}",
            f"in {session.cwd}",
            f"model {model}",
        )
    )
    body = "\n".join(filter(None, (_render_entry(entry) for entry in session.get_branch())))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head>\n<body>"
        f'<h1>{_e(title)}</h1><div class="meta">{meta}</div>\n{body}\n</body></html>\n'
    )
