"""One session entry as an HTML ``<section>`` of the exported page.

Each kind of entry gets its own class (user, assistant, thinking, tool call, tool result, shell,
compaction, branch summary, plugin message), so the page can tell them apart at a glance. Tool
calls and results are shown the way the tool means them: a ``read`` result is the file,
highlighted by its extension; ``write`` shows the content it writes; ``edit`` its diff; ``bash``
the command. Output longer than :data:`FOLD_LINES` lines starts folded, with its line count.

Everything here came from a model, a tool or a user: every text is escaped (directly, or by the
highlighter and markdown renderer of :mod:`.export_highlight`, which escape too).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from knightcode._modes.rpc.export_highlight import code_block, markdown

__all__ = ["FOLD_LINES", "ToolCall", "render_entry", "tool_calls_of"]

FOLD_LINES = 20
"""Tool output with more lines than this starts folded (its line count shown)."""

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}\Z")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """What a tool result answers: the call's tool name and arguments."""

    name: str
    arguments: Mapping[str, object]


def e(value: object) -> str:
    """``value`` as HTML text (quotes escaped too: safe in attributes)."""
    return html.escape(str(value), quote=True)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _dicts(value: object) -> list[Mapping[str, object]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def tool_calls_of(entries: list[Mapping[str, object]]) -> dict[str, ToolCall]:
    """Every tool call of the session by its id, so a result can be shown as its call meant."""
    calls: dict[str, ToolCall] = {}
    for entry in entries:
        message = entry.get("message")
        if entry.get("type") != "message" or not isinstance(message, dict):
            continue
        if message.get("role") != "assistant":
            continue
        for block in _dicts(message.get("content")):
            arguments = block.get("arguments")
            if block.get("type") == "toolCall" and isinstance(block.get("id"), str):
                calls[str(block["id"])] = ToolCall(
                    _text(block.get("name")), arguments if isinstance(arguments, dict) else {}
                )
    return calls


def _plain(text: str) -> str:
    return f'<pre class="text">{e(text)}</pre>'


def _image(block: Mapping[str, object]) -> str:
    mime, data = block.get("mimeType"), block.get("data")
    if mime in _IMAGE_TYPES and isinstance(data, str) and _BASE64.match(data):
        return f'<img alt="image" src="data:{e(mime)};base64,{e(data)}">'
    return '<p class="note">[image]</p>'


def _fold(label: str, text: str, body: str) -> str:
    """``body`` (the rendering of ``text``) with a line-count header; folded when long."""
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    state = "" if lines > FOLD_LINES else " open"
    summary = f"{e(label)} · {lines} line{'' if lines == 1 else 's'}"
    return f'<details class="out"{state}><summary>{summary}</summary>{body}</details>'


def _user_blocks(content: object) -> str:
    if isinstance(content, str):
        return _plain(content)
    parts: list[str] = []
    for block in _dicts(content):
        if block.get("type") == "text":
            parts.append(_plain(_text(block.get("text"))))
        elif block.get("type") == "image":
            parts.append(_image(block))
    return "".join(parts)


def _call_body(call: ToolCall) -> str:
    """A tool call's arguments, shown for what the built-in tools do with them."""
    args = call.arguments
    path = _text(args.get("path"))
    if call.name == "bash" and isinstance(args.get("command"), str):
        return code_block(_text(args["command"]), language="bash")
    if call.name == "read" and path:
        window = " ".join(f"{key} {args[key]}" for key in ("offset", "limit") if key in args)
        return f'<p class="path">{e(path)}{" · " + e(window) if window else ""}</p>'
    if call.name == "write" and path and isinstance(args.get("content"), str):
        content = _text(args["content"])
        return f'<p class="path">{e(path)}</p>' + _fold(
            "content", content, code_block(content, path=path)
        )
    if call.name == "edit" and path and isinstance(args.get("edits"), list):
        diff = "\n".join(
            "\n".join(
                [
                    *("-" + line for line in _text(item.get("oldText")).split("\n")),
                    *("+" + line for line in _text(item.get("newText")).split("\n")),
                ]
            )
            for item in _dicts(args["edits"])
        )
        return f'<p class="path">{e(path)}</p>' + code_block(diff, language="diff")
    arguments = json.dumps(args, ensure_ascii=False, indent=2)
    return code_block(arguments, language="json")


def _assistant_blocks(content: object) -> str:
    if isinstance(content, str):
        return f'<div class="md">{markdown(content)}</div>'
    parts: list[str] = []
    for block in _dicts(content):
        kind = block.get("type")
        if kind == "text":
            parts.append(f'<div class="md">{markdown(_text(block.get("text")))}</div>')
        elif kind == "thinking":
            thinking = _text(block.get("thinking"))
            parts.append(
                f'<details class="thinking"><summary>thinking</summary>{_plain(thinking)}</details>'
            )
        elif kind == "toolCall":
            call = ToolCall(_text(block.get("name")), {})
            arguments = block.get("arguments")
            if isinstance(arguments, dict):
                call = ToolCall(call.name, arguments)
            parts.append(
                f'<div class="call"><div class="role">tool call · {e(call.name or "?")}'
                f' <span class="id">{e(block.get("id", ""))}</span></div>'
                f"{_call_body(call)}</div>"
            )
        elif kind == "image":
            parts.append(_image(block))
    return "".join(parts)


def _result_body(message: Mapping[str, object], call: ToolCall | None) -> str:
    blocks = _dicts(message.get("content"))
    text = "\n".join(_text(block.get("text")) for block in blocks if block.get("type") == "text")
    images = "".join(_image(block) for block in blocks if block.get("type") == "image")
    name = call.name if call else _text(message.get("toolName"))
    path = _text(call.arguments.get("path")) if call else ""
    details = message.get("details")
    diff = _text(details.get("diff")) if isinstance(details, dict) else ""
    if name == "edit" and diff and not message.get("isError"):
        return _plain(text) + _fold("diff", diff, code_block(diff, language="diff")) + images
    if name == "read" and path and not message.get("isError"):
        return _fold("output", text, code_block(text, path=path)) + images
    return (_fold("output", text, _plain(text)) if text else "") + images


def _section(entry_id: str, css: str, role: str, body: str, hidden: bool) -> str:
    attributes = f' id="e-{e(entry_id)}" data-id="{e(entry_id)}"' + (" hidden" if hidden else "")
    return (
        f'<section class="entry {css}"{attributes}><div class="role">{e(role)}</div>'
        f"{body}</section>"
    )


def _message_parts(
    message: Mapping[str, object], calls: Mapping[str, ToolCall]
) -> tuple[str, str, str] | None:
    """(css class, role label, body) of a message entry."""
    role = _text(message.get("role"))
    if role == "assistant":
        body = _assistant_blocks(message.get("content"))
        if message.get("errorMessage"):
            body += _plain(f"Error: {message['errorMessage']}")
        note = f"{_text(message.get('provider'))}/{_text(message.get('model'))}"
        stop = _text(message.get("stopReason"))
        css = "assistant error" if stop in ("error", "aborted") else "assistant"
        return css, "assistant", body + f'<p class="note">{e(note)} · {e(stop)}</p>'
    if role == "toolResult":
        call = calls.get(_text(message.get("toolCallId")))
        name = call.name if call else _text(message.get("toolName"))
        label = f"tool result · {name or '?'}" + (" · error" if message.get("isError") else "")
        css = "toolResult error" if message.get("isError") else "toolResult"
        return css, label, _result_body(message, call)
    if role == "bashExecution":
        output = _text(message.get("output"))
        body = code_block(_text(message.get("command")), language="bash")
        body += _fold("output", output, _plain(output))
        status = "cancelled" if message.get("cancelled") else f"exit code {message.get('exitCode')}"
        return "bashExecution", "shell", body + f'<p class="note">{e(status)}</p>'
    if role == "custom":
        label = f"plugin message · {_text(message.get('customType'))}"
        return "custom", label, _user_blocks(message.get("content"))
    if role == "user":
        return "user", "user", _user_blocks(message.get("content"))
    return "custom", role or "?", _user_blocks(message.get("content"))


def render_entry(
    entry: Mapping[str, object], calls: Mapping[str, ToolCall], *, hidden: bool
) -> str:
    """The entry's section (empty for entries that are not conversation: labels, plugin state,
    session names, context edits). ``hidden`` sections are off the current branch.
    """
    entry_id = _text(entry.get("id"))
    kind = entry.get("type")
    message = entry.get("message")
    parts: tuple[str, str, str] | None = None
    if kind == "message" and isinstance(message, dict):
        parts = _message_parts(message, calls)
    elif kind == "compaction":
        tokens = entry.get("tokensBefore")
        label = "compaction" + (f" · {tokens} tokens before" if isinstance(tokens, int) else "")
        summary = f'<div class="md">{markdown(_text(entry.get("summary")))}</div>'
        parts = ("compaction", label, summary)
    elif kind == "branch_summary":
        summary = f'<div class="md">{markdown(_text(entry.get("summary")))}</div>'
        parts = ("branchSummary", "branch summary", summary)
    elif kind == "custom_message" and entry.get("display", True):
        label = f"plugin message · {_text(entry.get('customType'))}"
        parts = ("custom", label, _user_blocks(entry.get("content")))
    elif kind == "model_change":
        model = f"{_text(entry.get('provider'))}/{_text(entry.get('modelId'))}"
        parts = ("change", "model", f'<p class="note">{e(model)}</p>')
    elif kind == "thinking_level_change":
        level = _text(entry.get("thinkingLevel"))
        parts = ("change", "thinking level", f'<p class="note">{e(level)}</p>')
    if parts is None:
        return ""
    return _section(entry_id, *parts, hidden)
