"""Transcript messages as rich renderables: user, assistant, ``!`` commands, plugin messages,
summaries, notices and the retry line.

Each function renders one item with no blank line around it; the transcript puts one blank line
between items. Tool calls are not drawn here: :func:`..tools.render_tool` draws a call and its
result as one block.
"""

from __future__ import annotations

import math
from typing import Literal, cast

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.style import Style
from rich.text import Text

from knightcode._modes.interactive.render.blocks import (
    Gutter,
    Trimmed,
    clip_tail,
    more_lines_hint,
    sanitize,
    split_lines,
    text_and_images,
)
from knightcode._modes.interactive.render.options import RenderOptions
from knightcode._types.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ThinkingContent,
    UserMessage,
)

__all__ = [
    "BASH_PREVIEW_LINES",
    "NoticeLevel",
    "render_assistant",
    "render_assistant_text",
    "render_bash_execution",
    "render_branch_summary",
    "render_compaction_summary",
    "render_custom",
    "render_notice",
    "render_retry",
    "render_stop_reason",
    "render_thinking",
    "render_user",
]

BASH_PREVIEW_LINES = 20
"""Lines of ``!cmd`` output shown collapsed (the last ones)."""

NoticeLevel = Literal["info", "warning", "error"]

_ABORTED_DEFAULT = "Request was aborted"
_SUMMARY_PREVIEW_CHARS = 240


def render_user(message: UserMessage, o: RenderOptions) -> RenderableType:
    """The user's message as typed (not markdown: line breaks stay), on the user background,
    one image placeholder per attached image.
    """
    text, images = text_and_images(message["content"])
    body = Text(sanitize(text).rstrip("\n"), style=o.theme.user_message)
    for placeholder in images:
        body.append("\n" + placeholder, style=o.theme.muted)
    return Padding(body, (1, 2), style=o.theme.user_message, expand=True)


def render_assistant_text(text: str, o: RenderOptions) -> RenderableType:
    """Assistant markdown with syntax-highlighted code blocks (``theme.code_theme``).

    Used for a whole text block and, while streaming, for each completed block and the open tail
    from :class:`..markdown_stream.StreamingMarkdown`. Links show their address in the text:
    the scrollback may sit in a terminal without hyperlink support.
    """
    return _markdown(text, o.theme.assistant_text, o)


def _markdown(text: str, style: Style, o: RenderOptions) -> RenderableType:
    # rich types ``code_theme`` as a name, but hands it to Syntax, which takes a theme object.
    code_theme = cast("str", o.theme.code_theme)
    markdown = Markdown(text, code_theme=code_theme, style=style, hyperlinks=False)
    return Trimmed(markdown, o.theme.markdown)


def _thinking_summary(thinking: str) -> str:
    words = " ".join(thinking[:_SUMMARY_PREVIEW_CHARS].split())
    return words


def render_thinking(block: ThinkingContent | str, o: RenderOptions) -> RenderableType:
    """A thinking block: collapsed, one muted line "Thinking… <first words>" cut at the width;
    shown whole (``o.show_thinking``), the reasoning as italic muted markdown.
    """
    thinking = block if isinstance(block, str) else block["thinking"]
    redacted = not isinstance(block, str) and bool(block.get("redacted"))
    style = o.theme.thinking_text
    if redacted:
        return Text("Thinking… (redacted by the provider)", style=style)
    if o.show_thinking and thinking.strip():
        return _markdown(thinking.strip(), style, o)
    line = Text("Thinking…", style=style, no_wrap=True, overflow="ellipsis")
    summary = _thinking_summary(thinking)
    if summary:
        line.append(" " + summary, style=o.theme.dim)
    return line


def render_stop_reason(message: AssistantMessage, o: RenderOptions) -> Text | None:
    """The line that says a reply did not end normally: "Error: …" or "Interrupted"."""
    reason = message.get("stopReason")
    detail = message.get("errorMessage", "").strip()
    if reason == "error":
        return Text(f"Error: {detail or 'unknown error'}", style=o.theme.error)
    if reason == "aborted":
        if detail and detail != _ABORTED_DEFAULT:
            return Text(f"Interrupted: {detail}", style=o.theme.warning)
        return Text("Interrupted", style=o.theme.warning)
    if reason == "length":
        return Text("Stopped: the reply reached the output token limit", style=o.theme.warning)
    return None


def render_assistant(message: AssistantMessage, o: RenderOptions) -> RenderableType | None:
    """A finished assistant message: its thinking and text blocks in order, then the stop-reason
    line; tool calls are left to :func:`..tools.render_tool`. None when nothing shows.
    """
    parts: list[RenderableType] = []
    for block in message.get("content", []):
        if block["type"] == "text" and block["text"].strip():
            parts.append(render_assistant_text(block["text"].strip(), o))
        elif block["type"] == "thinking" and (block["thinking"].strip() or block.get("redacted")):
            parts.append(render_thinking(block, o))
    stop = render_stop_reason(message, o)
    if stop is not None:
        parts.append(stop)
    if not parts:
        return None
    spaced: list[RenderableType] = []
    for part in parts:
        if spaced:
            spaced.append(Text(""))
        spaced.append(part)
    return Group(*spaced)


def render_bash_execution(
    message: BashExecutionMessage, o: RenderOptions, *, running: bool = False
) -> RenderableType:
    """A ``!cmd`` (or ``!!cmd``) record: the command, its output (collapsed to the last
    :data:`BASH_PREVIEW_LINES` lines), then the exit code, cancellation and truncation.

    ``running``: the command has not finished (output so far, no exit status yet).
    """
    theme = o.theme
    header = Text()
    header.append(f"$ {sanitize(message['command'])}", style=theme.bash_mode + theme.tool_title)
    if message.get("excludeFromContext"):
        header.append("  (not sent to the model)", style=theme.muted)
    rows: list[RenderableType] = [header]
    lines = split_lines(sanitize(message.get("output", "")).rstrip("\n"))
    clipped = clip_tail(lines, None if o.expand_tools else BASH_PREVIEW_LINES)
    if clipped.hidden:
        rows.append(more_lines_hint(clipped.hidden, o, earlier=True))
    if clipped.lines:
        rows.append(Text("\n".join(clipped.lines), style=theme.tool_output))
    status = Text()
    exit_code = message.get("exitCode")
    if running:
        status.append("running…", style=theme.muted)
    elif message.get("cancelled"):
        status.append("cancelled", style=theme.warning)
    elif exit_code is not None and exit_code != 0:
        status.append(f"exit {exit_code}", style=theme.error)
    if message.get("truncated"):
        if status:
            status.append(" · ", style=theme.muted)
        path = message.get("fullOutputPath")
        note = f"output truncated; full output: {path}" if path else "output truncated"
        status.append(note, style=theme.warning)
    if status:
        rows.append(status)
    failed = not running and (message.get("cancelled") or exit_code not in (0, None))
    return Gutter(Group(*rows), theme.error if failed else theme.bash_mode)


def render_custom(message: CustomMessage, o: RenderOptions) -> RenderableType | None:
    """A message a plugin injected: its type as a label, its text as markdown; None when the
    plugin asked for it not to be shown (``display`` false).
    """
    if not message.get("display", False):
        return None
    theme = o.theme
    text, images = text_and_images(message["content"])
    rows: list[RenderableType] = [Text(f"[{message['customType']}]", style=theme.custom_label)]
    if text.strip():
        rows.append(_markdown(text.strip(), theme.custom_text, o))
    rows += [Text(placeholder, style=theme.muted) for placeholder in images]
    return Gutter(Group(*rows), theme.custom_label)


def _summary(label: Text, collapsed: str, summary: str, o: RenderOptions) -> RenderableType:
    theme = o.theme
    if not o.expand_tools:
        line = label.copy()
        line.append(f" {collapsed} (", style=theme.muted)
        line.append(o.expand_hint, style=theme.accent)
        line.append(" to expand)", style=theme.muted)
        return Gutter(line, theme.summary)
    body = _markdown(summary, theme.custom_text, o)
    return Gutter(Group(label, Text(""), body), theme.summary)


def render_compaction_summary(
    message: CompactionSummaryMessage, o: RenderOptions
) -> RenderableType:
    """Where the context was compacted: collapsed, one line with the token count before; expanded,
    the summary the model now sees instead of the earlier messages.
    """
    tokens = f"{message['tokensBefore']:,}"
    label = Text()
    label.append("Compaction", style=o.theme.summary + o.theme.tool_title)
    return _summary(label, f"· compacted from {tokens} tokens", message["summary"], o)


def render_branch_summary(message: BranchSummaryMessage, o: RenderOptions) -> RenderableType:
    """The summary of a branch left with ``/tree``: collapsed, one line; expanded, the summary."""
    words = len(message["summary"].split())
    label = Text()
    label.append("Branch summary", style=o.theme.summary + o.theme.tool_title)
    return _summary(label, f"· {words:,} words", message["summary"], o)


def render_notice(text: str, level: NoticeLevel, o: RenderOptions) -> Text:
    """An info, warning or error line (plugin ``notify``, command results, errors)."""
    theme = o.theme
    mark, style = {
        "info": ("•", theme.accent),
        "warning": ("!", theme.warning),
        "error": ("✗", theme.error),
    }[level]
    line = Text()
    line.append(f"{mark} ", style=style)
    line.append(sanitize(text).rstrip("\n"), style=theme.text if level == "info" else style)
    return line


def render_retry(
    attempt: int, max_attempts: int, seconds_left: float, error: str, o: RenderOptions
) -> Text:
    """The retry status line: "Retrying in 3s (attempt 2/5): <error>", cut at the width."""
    seconds = max(0, math.ceil(seconds_left))
    line = Text(
        f"Retrying in {seconds}s (attempt {attempt}/{max_attempts})",
        style=o.theme.warning,
        no_wrap=True,
        overflow="ellipsis",
    )
    first_line = sanitize(error).strip().split("\n", 1)[0]
    if first_line:
        line.append(f": {first_line}", style=o.theme.muted)
    return line
