"""Transcript items as rich renderables: the one place that knows which renderer draws what."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text

from knightcode._modes.interactive.render import (
    RenderOptions,
    render_assistant,
    render_assistant_text,
    render_bash_execution,
    render_branch_summary,
    render_compaction_summary,
    render_custom,
    render_notice,
    render_stop_reason,
    render_thinking,
    render_tool,
    render_user,
)

if TYPE_CHECKING:
    from rich.console import RenderableType

    from knightcode._modes.interactive.transcript import Item, Turn
    from knightcode._types.messages import AgentMessage, AssistantContent, ToolCall

__all__ = [
    "render_block",
    "render_item",
    "render_live",
    "render_tools_and_stop",
]

NOTHING = Text("")


def _spaced(parts: list[RenderableType]) -> RenderableType:
    spaced: list[RenderableType] = []
    for part in parts:
        if spaced:
            spaced.append(NOTHING)
        spaced.append(part)
    return Group(*spaced)


def _partial_text(turn: Turn, call: ToolCall) -> str | None:
    partial = turn.partial.get(call["id"])
    if partial is None:
        return None
    return "".join(b["text"] for b in partial.get("content", []) if b["type"] == "text")


def _tool(turn: Turn, call: ToolCall, o: RenderOptions) -> RenderableType:
    return render_tool(call, turn.results.get(call["id"]), _partial_text(turn, call), o)


def render_block(block: AssistantContent, o: RenderOptions) -> RenderableType | None:
    """One finished thinking or text block of an assistant message (tool calls: None)."""
    if block["type"] == "text":
        return render_assistant_text(block["text"].strip(), o) if block["text"].strip() else None
    if block["type"] == "thinking" and (block["thinking"].strip() or block.get("redacted")):
        return render_thinking(block, o)
    return None


def render_tools_and_stop(turn: Turn, o: RenderOptions) -> RenderableType | None:
    """What is printed when a turn ends after its text was streamed out: its tool blocks and the
    stop-reason line.
    """
    parts: list[RenderableType] = [_tool(turn, call, o) for call in turn.calls()]
    stop = render_stop_reason(turn.message, o)
    if stop is not None:
        parts.append(stop)
    return _spaced(parts) if parts else None


def render_turn(turn: Turn, o: RenderOptions) -> RenderableType | None:
    """A whole turn (reprints, resumed sessions): text and thinking, tools, stop reason."""
    parts: list[RenderableType] = []
    text = render_assistant(turn.message, o)
    if text is not None:
        parts.append(text)
    parts.extend(_tool(turn, call, o) for call in turn.calls())
    return _spaced(parts) if parts else None


def render_live(turn: Turn, o: RenderOptions) -> RenderableType | None:
    """The part of a streaming turn not printed yet: the open markdown block, thinking in
    progress, tool calls waiting for or running their tools.
    """
    parts: list[RenderableType] = []
    content = turn.message["content"]
    for index in range(turn.printed, len(content)):
        block = content[index]
        if block["type"] == "toolCall":
            continue
        if index == turn.stream_index and turn.stream is not None:
            tail = turn.stream.tail().strip()
            if tail:
                parts.append(render_assistant_text(tail, o))
            continue
        rendered = render_block(block, o)
        if rendered is not None:
            parts.append(rendered)
    parts.extend(_tool(turn, call, o) for call in turn.calls())
    return _spaced(parts) if parts else None


def _message(message: AgentMessage, o: RenderOptions) -> RenderableType | None:
    if message["role"] == "user":
        return render_user(message, o)
    if message["role"] == "bashExecution":
        return render_bash_execution(message, o)
    if message["role"] == "compactionSummary":
        return render_compaction_summary(message, o)
    if message["role"] == "branchSummary":
        return render_branch_summary(message, o)
    if message["role"] == "custom":
        return render_custom(message, o)
    return None


def render_item(item: Item, o: RenderOptions) -> RenderableType | None:
    """A finished item; None when it shows nothing (a hidden custom message)."""
    if item.kind == "turn" and item.turn is not None:
        return render_turn(item.turn, o)
    if item.kind == "message" and item.message is not None:
        return _message(item.message, o)
    if item.kind == "notice":
        return render_notice(item.text, item.level, o)
    return item.renderable
