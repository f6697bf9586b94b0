"""Pure rendering of the transcript: messages, tool blocks, summaries and streamed markdown as
rich renderables (no Textual here).

The app writes a finished item into the terminal's scrollback with :func:`to_ansi` at the terminal
width, and shows the item being streamed in its live region. Every function takes the data and a
:class:`RenderOptions` (width, theme, expand/collapse state) and returns a renderable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knightcode._lazy import lazy_attributes

# The names below are loaded on first use: the markdown stack (rich.markdown, markdown-it,
# pygments) is not needed to draw the first frame, and the ready editor should not wait for it.
_WHERE = {
    "line_count": "ansi",
    "to_ansi": "ansi",
    "render_diff": "diff",
    "StreamingMarkdown": "markdown_stream",
    "render_assistant": "messages",
    "render_assistant_text": "messages",
    "render_bash_execution": "messages",
    "render_branch_summary": "messages",
    "render_compaction_summary": "messages",
    "render_custom": "messages",
    "render_notice": "messages",
    "render_retry": "messages",
    "render_stop_reason": "messages",
    "render_thinking": "messages",
    "render_user": "messages",
    "RenderOptions": "options",
    "DARK": "theme",
    "LIGHT": "theme",
    "Theme": "theme",
    "render_tool": "tools",
    "tool_status": "tools",
}


__getattr__ = lazy_attributes(
    __name__, {name: f"{__name__}.{module}" for name, module in _WHERE.items()}
)


if TYPE_CHECKING:
    from knightcode._modes.interactive.render.ansi import line_count, to_ansi
    from knightcode._modes.interactive.render.diff import render_diff
    from knightcode._modes.interactive.render.markdown_stream import StreamingMarkdown
    from knightcode._modes.interactive.render.messages import (
        render_assistant,
        render_assistant_text,
        render_bash_execution,
        render_branch_summary,
        render_compaction_summary,
        render_custom,
        render_notice,
        render_retry,
        render_stop_reason,
        render_thinking,
        render_user,
    )
    from knightcode._modes.interactive.render.options import RenderOptions
    from knightcode._modes.interactive.render.theme import DARK, LIGHT, Theme
    from knightcode._modes.interactive.render.tools import render_tool, tool_status

__all__ = [
    "DARK",
    "LIGHT",
    "RenderOptions",
    "StreamingMarkdown",
    "Theme",
    "line_count",
    "render_assistant",
    "render_assistant_text",
    "render_bash_execution",
    "render_branch_summary",
    "render_compaction_summary",
    "render_custom",
    "render_diff",
    "render_notice",
    "render_retry",
    "render_stop_reason",
    "render_thinking",
    "render_tool",
    "render_user",
    "to_ansi",
    "tool_status",
]
