"""A tool call and its result as one block: a header that says what the tool was asked, the
output (collapsed to a few lines unless ``expand_tools``), and a gutter coloured by status.

The header is specific to each built-in tool (``$ command`` for bash, the path and line range for
read, …); any other tool shows its name and its arguments as compact JSON. ``edit`` shows the
coloured diff from its ``details``, ``write`` the written content highlighted by file type.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Literal

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from knightcode._modes.interactive.render.blocks import (
    Gutter,
    clip_head,
    clip_tail,
    display_path,
    more_lines_hint,
    sanitize,
    split_lines,
    text_and_images,
)
from knightcode._modes.interactive.render.diff import diff_lines
from knightcode._modes.interactive.render.options import RenderOptions
from knightcode._types.messages import ToolCall, ToolResultMessage

__all__ = ["EDIT_PREVIEW_LINES", "TOOL_PREVIEW_LINES", "ToolStatus", "render_tool", "tool_status"]

TOOL_PREVIEW_LINES = 10
"""Output lines a collapsed tool block shows (bash: the last ones; other tools: the first)."""
EDIT_PREVIEW_LINES = 30
"""Diff lines a collapsed edit shows: reviewing a change is the point of the block."""

ToolStatus = Literal["pending", "running", "success", "error"]


def tool_status(result: ToolResultMessage | None, partial: str | None) -> ToolStatus:
    """``pending`` (no output yet), ``running`` (partial output), ``success`` or ``error``."""
    if result is not None:
        return "error" if result.get("isError") else "success"
    return "pending" if partial is None else "running"


# --- reading arguments and details: a model may send any shape -------------------------------


def _str(args: dict[str, object], *keys: str) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return ""


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _detail(details: object, key: str) -> object:
    return details.get(key) if isinstance(details, dict) else None


# --- headers ---------------------------------------------------------------------------------


def _title(name: str, o: RenderOptions) -> Text:
    # The title styles its span only: what is appended after it keeps its own style.
    title = Text()
    title.append(name, style=o.theme.tool_title)
    return title


def _path_text(path: str, o: RenderOptions, default: str = "…") -> Text:
    shown = display_path(path, o) if path else default
    return Text(shown, style=o.theme.accent)


def _bash_header(call: ToolCall, result: ToolResultMessage | None, o: RenderOptions) -> Text:
    command = sanitize(_str(call["arguments"], "command"))
    lines = command.split("\n")
    header = _title(f"$ {lines[0] if not o.expand_tools else command}", o)
    if len(lines) > 1 and not o.expand_tools:
        header.append(f" (+{len(lines) - 1} more lines)", style=o.theme.muted)
    timeout = _int(call["arguments"].get("timeout"))
    if timeout is not None:
        header.append(f"  (timeout {timeout}s)", style=o.theme.muted)
    return header


def _read_header(call: ToolCall, result: ToolResultMessage | None, o: RenderOptions) -> Text:
    args = call["arguments"]
    header = _title("read ", o) + _path_text(_str(args, "path", "file_path"), o)
    offset, limit = _int(args.get("offset")), _int(args.get("limit"))
    if offset is not None or limit is not None:
        start = offset if offset is not None else 1
        end = f"-{start + limit - 1}" if limit is not None else ""
        header.append(f":{start}{end}", style=o.theme.warning)
    return header


def _write_header(call: ToolCall, result: ToolResultMessage | None, o: RenderOptions) -> Text:
    args = call["arguments"]
    header = _title("write ", o) + _path_text(_str(args, "path", "file_path"), o)
    content = args.get("content")
    if isinstance(content, str):
        count = len(split_lines(content))
        header.append(f" ({count} line{'' if count == 1 else 's'})", style=o.theme.muted)
    return header


def _edit_header(call: ToolCall, result: ToolResultMessage | None, o: RenderOptions) -> Text:
    header = _title("edit ", o) + _path_text(_str(call["arguments"], "path", "file_path"), o)
    first = _int(_detail(result.get("details"), "firstChangedLine")) if result else None
    if first is not None and result is not None and not result.get("isError"):
        header.append(f":{first}", style=o.theme.warning)
    return header


def _search_header(name: str, call: ToolCall, o: RenderOptions) -> Text:
    args = call["arguments"]
    pattern = sanitize(_str(args, "pattern"))
    header = _title(f"{name} ", o)
    header.append(f"/{pattern}/" if name == "grep" else pattern, style=o.theme.accent)
    header.append(f" in {display_path(_str(args, 'path') or '.', o)}", style=o.theme.muted)
    glob = _str(args, "glob")
    if glob:
        header.append(f" ({glob})", style=o.theme.muted)
    limit = _int(args.get("limit"))
    if limit is not None:
        header.append(f" (limit {limit})", style=o.theme.muted)
    return header


def _ls_header(call: ToolCall, result: ToolResultMessage | None, o: RenderOptions) -> Text:
    args = call["arguments"]
    header = _title("ls ", o) + _path_text(_str(args, "path"), o, default=".")
    limit = _int(args.get("limit"))
    if limit is not None:
        header.append(f" (limit {limit})", style=o.theme.muted)
    return header


def _fetch_header(call: ToolCall, result: ToolResultMessage | None, o: RenderOptions) -> Text:
    url = _str(call["arguments"], "url")
    if not url:
        return _generic_header(call, o)
    header = _title("fetch ", o)
    header.append(sanitize(url), style=o.theme.accent)
    if call["arguments"].get("raw") is True:
        header.append(" (raw)", style=o.theme.muted)
    return header


def _web_search_header(call: ToolCall, result: ToolResultMessage | None, o: RenderOptions) -> Text:
    args = call["arguments"]
    query = _str(args, "query")
    if not query:
        return _generic_header(call, o)
    header = _title("search ", o)
    header.append(sanitize(query), style=o.theme.accent)
    count = _int(args.get("count"))
    if count is not None:
        header.append(f" ({count} results)", style=o.theme.muted)
    return header


def _code_header(call: ToolCall, result: ToolResultMessage | None, o: RenderOptions) -> Text:
    # Codemode's script: its size here, the calls it made and its output in the body.
    script = _str(call["arguments"], "script")
    if not script:
        return _generic_header(call, o)
    count = len(split_lines(script))
    header = _title("code ", o)
    header.append(f"python script ({count} line{'' if count == 1 else 's'})", style=o.theme.muted)
    return header


def _generic_header(call: ToolCall, o: RenderOptions) -> Text:
    header = _title(sanitize(call["name"]), o)
    if call["arguments"]:
        header.append(" ")
        if o.expand_tools:
            encoded = json.dumps(call["arguments"], ensure_ascii=False, indent=2)
        else:
            encoded = json.dumps(call["arguments"], ensure_ascii=False, separators=(",", ":"))
            header.no_wrap = True
            header.overflow = "ellipsis"
        header.append(sanitize(encoded), style=o.theme.muted)
    return header


_HEADERS: dict[str, Callable[[ToolCall, ToolResultMessage | None, RenderOptions], Text]] = {
    "bash": _bash_header,
    "read": _read_header,
    "write": _write_header,
    "edit": _edit_header,
    "grep": lambda call, _result, o: _search_header("grep", call, o),
    "find": lambda call, _result, o: _search_header("find", call, o),
    "ls": _ls_header,
    # builtin:web-tools; another plugin's tool of the same name without the argument shown
    # gets the generic header
    "web_fetch": _fetch_header,
    "web_search": _web_search_header,
    "code": _code_header,
}


# --- bodies ----------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _lexer_for(name: str) -> str | None:
    """The lexer for a file name, from its extension only (guessing from content is slow)."""
    lexer = Syntax.guess_lexer(name)
    return None if lexer == "default" else lexer


def _code(lines: Sequence[str], path: str, o: RenderOptions) -> RenderableType:
    text = "\n".join(lines)
    lexer = _lexer_for(path.rsplit("/", 1)[-1]) if path else None
    if lexer is None:
        return Text(text, style=o.theme.tool_output)
    return Syntax(text, lexer, theme=o.theme.code_theme, word_wrap=True, background_color="default")


def _output_lines(result: ToolResultMessage | None, partial: str | None) -> list[str]:
    if result is None:
        return split_lines(sanitize(partial or "").rstrip("\n"))
    text, images = text_and_images(result.get("content", []))
    return [*split_lines(sanitize(text).rstrip("\n")), *images]


def _warnings(name: str, details: object) -> list[str]:
    """The reference's notes on a cut result: limits reached, truncation, the full output."""
    notes: list[str] = []
    for key, label in (
        ("matchLimitReached", "matches limit"),
        ("resultLimitReached", "results limit"),
        ("entryLimitReached", "entries limit"),
    ):
        limit = _int(_detail(details, key))
        if limit is not None:
            notes.append(f"{limit} {label}")
    truncation = _detail(details, "truncation")
    if _detail(truncation, "truncated") is True:
        shown, total = (
            _int(_detail(truncation, "outputLines")),
            _int(_detail(truncation, "totalLines")),
        )
        if (
            _detail(truncation, "truncatedBy") == "lines"
            and shown is not None
            and total is not None
        ):
            notes.append(f"showing {shown} of {total} lines")
        else:
            notes.append("output limit reached")
    if _detail(details, "linesTruncated") is True:
        notes.append("some lines cut")
    path = _detail(details, "fullOutputPath")
    if isinstance(path, str) and path:
        notes.append(f"full output: {path}")
    return notes


def _output_body(
    name: str, lines: list[str], failed: bool, path: str, o: RenderOptions
) -> list[RenderableType]:
    """The output, clipped: bash keeps its last lines, the other tools their first ones."""
    keep = None if o.expand_tools else TOOL_PREVIEW_LINES
    rows: list[RenderableType] = []
    if name == "bash":
        clipped = clip_tail(lines, keep)
        if clipped.hidden:
            rows.append(more_lines_hint(clipped.hidden, o, earlier=True))
    else:
        clipped = clip_head(lines, keep)
    if clipped.lines:
        if failed:
            rows.append(Text("\n".join(clipped.lines), style=o.theme.error))
        elif name == "read" and path:
            rows.append(_code(clipped.lines, path, o))
        else:
            rows.append(Text("\n".join(clipped.lines), style=o.theme.tool_output))
    if clipped.hidden and name != "bash":
        rows.append(more_lines_hint(clipped.hidden, o))
    return rows


def _write_body(call: ToolCall, o: RenderOptions) -> list[RenderableType]:
    content = call["arguments"].get("content")
    if not isinstance(content, str) or not content:
        return []
    path = _str(call["arguments"], "path", "file_path")
    lines = split_lines(content.replace("\t", "    "))
    clipped = clip_head(lines, None if o.expand_tools else TOOL_PREVIEW_LINES)
    rows: list[RenderableType] = [_code(clipped.lines, path, o)]
    if clipped.hidden:
        rows.append(more_lines_hint(clipped.hidden, o))
    return rows


def _edit_body(result: ToolResultMessage, o: RenderOptions) -> list[RenderableType] | None:
    diff = _detail(result.get("details"), "diff")
    if result.get("isError") or not isinstance(diff, str) or not diff:
        return None
    lines = diff_lines(diff, o.theme)
    keep = None if o.expand_tools else EDIT_PREVIEW_LINES
    rows: list[RenderableType] = list(lines[:keep] if keep is not None else lines)
    if keep is not None and len(lines) > keep:
        rows.append(more_lines_hint(len(lines) - keep, o))
    return rows


def render_tool(
    call: ToolCall,
    result: ToolResultMessage | None,
    partial: str | None,
    o: RenderOptions,
    *,
    expand_hint: str | None = None,
) -> RenderableType:
    """One block for a tool call: its header, its output or diff, notes on truncation, and a
    gutter in the pending, success or error colour.

    :param result: the tool's result message once it finished, else None.
    :param partial: output streamed so far (bash) while it runs, else None.
    :param expand_hint: the key text in "… N more lines (<key> to expand)"; defaults to
        ``o.expand_hint``.
    """
    if expand_hint is not None and expand_hint != o.expand_hint:
        o = replace(o, expand_hint=expand_hint)
    name = call["name"]
    status = tool_status(result, partial)
    header_of = _HEADERS.get(name)
    rows: list[RenderableType] = [
        header_of(call, result, o) if header_of else _generic_header(call, o)
    ]
    body: list[RenderableType] | None = None
    if name == "write":
        # The content is what the user wants to see; the success text ("Wrote N bytes") is not.
        body = _write_body(call, o)
        if status == "error":
            body += _output_body(name, _output_lines(result, None), True, "", o)
    elif name == "edit" and result is not None:
        body = _edit_body(result, o)
    if body is None:
        path = _str(call["arguments"], "path", "file_path")
        lines = _output_lines(result, partial)
        body = _output_body(name, lines, status == "error", path, o)
    rows += body
    if result is not None:
        notes = _warnings(name, result.get("details"))
        if notes:
            rows.append(Text(f"[{'; '.join(notes)}]", style=o.theme.warning))
    if status in ("pending", "running"):
        rows.append(Text("running…" if status == "running" else "waiting…", style=o.theme.muted))
    style = {
        "error": o.theme.tool_error,
        "success": o.theme.tool_success,
        "pending": o.theme.tool_pending,
        "running": o.theme.tool_pending,
    }[status]
    return Gutter(Group(*rows), style)
