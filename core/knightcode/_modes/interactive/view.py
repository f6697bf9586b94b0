"""Transcript items as rich renderables: the one place that knows which renderer draws what."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rich.console import Group
from rich.markdown import Markdown
from rich.padding import Padding
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import RenderableType

    from knightcode._modes.interactive.transcript import Item, Turn, ViewOptions
    from knightcode._types.messages import AgentMessage, ToolCall

__all__ = ["render_item", "render_turn"]

COLLAPSED_LINES = 10


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", "")) if isinstance(block, dict) else "" for block in content
        )
    return ""


def _message(message: AgentMessage, options: ViewOptions) -> RenderableType:
    if message["role"] == "user":
        return Padding(Text(_text_of(message["content"])), (0, 1), style="on grey19")
    if message["role"] == "bashExecution":
        head = Text(f"$ {message['command']}", style="bold")
        return Group(head, Text(str(message.get("output") or ""), style="dim"))
    if message["role"] == "compactionSummary":
        return Text("[Compacted]", style="dim italic")
    if message["role"] == "branchSummary":
        return Text("[Branch summary]", style="dim italic")
    if message["role"] == "custom":
        return Text(_text_of(message["content"]))
    return Text("")


def _tool(call: ToolCall, turn: Turn, options: ViewOptions) -> RenderableType:
    arguments = call.get("arguments", {})
    if call["name"] == "bash" and isinstance(arguments, dict):
        header = Text(f"$ {arguments.get('command', '')}", style="bold")
    else:
        header = Text(f"{call['name']} {json.dumps(arguments, ensure_ascii=False)[:200]}")
    result = turn.results.get(call["id"])
    if result is not None:
        output = _text_of(result["content"])
        style = "red" if result.get("isError") else "dim"
    elif call["id"] in turn.partial:
        output = _text_of(turn.partial[call["id"]].get("content", []))
        style = "dim"
    else:
        output, style = ("…" if call["id"] in turn.running else ""), "dim"
    lines = output.splitlines()
    if not options.expand_tools and len(lines) > COLLAPSED_LINES:
        hidden = len(lines) - COLLAPSED_LINES
        lines = [*lines[-COLLAPSED_LINES:], f"… {hidden} more lines ({options.expand_hint})"]
    return Padding(Group(header, Text("\n".join(lines), style=style)), (0, 1), style="on grey11")


def render_turn(turn: Turn, options: ViewOptions) -> RenderableType:
    parts: list[RenderableType] = []
    for block in turn.message["content"]:
        if block["type"] == "text" and block["text"].strip():
            parts.append(Markdown(block["text"]))
        elif block["type"] == "thinking" and block["thinking"].strip():
            if options.show_thinking:
                parts.append(Text(block["thinking"], style="dim italic"))
            else:
                parts.append(Text("Thinking…", style="dim italic"))
        elif block["type"] == "toolCall":
            parts.append(_tool(block, turn, options))
    message = turn.message
    if message.get("stopReason") == "error":
        parts.append(Text(f"Error: {message.get('errorMessage', 'unknown error')}", style="red"))
    elif message.get("stopReason") == "aborted":
        parts.append(Text("Interrupted", style="yellow"))
    return Group(*parts)


def render_item(item: Item, options: ViewOptions) -> RenderableType:
    if item.kind == "turn" and item.turn is not None:
        return render_turn(item.turn, options)
    if item.kind == "message" and item.message is not None:
        return _message(item.message, options)
    if item.kind == "notice":
        style = {"info": "cyan", "warning": "yellow", "error": "red"}[item.level]
        return Text(item.text, style=style)
    return item.renderable if item.renderable is not None else Text("")
