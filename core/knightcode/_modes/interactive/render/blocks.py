"""Building blocks the message and tool renderers share: the gutter, clipping, paths, images."""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from rich.theme import Theme as RichStyles

from knightcode._modes.interactive.render.ansi import is_blank
from knightcode._modes.interactive.render.options import RenderOptions
from knightcode._types.messages import ImageContent, TextContent

__all__ = [
    "Clipped",
    "Gutter",
    "Trimmed",
    "clip_head",
    "clip_tail",
    "display_path",
    "image_placeholder",
    "more_lines_hint",
    "sanitize",
    "split_lines",
    "text_and_images",
]

# Escape sequences in tool or command output would move the cursor or recolour the scrollback.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class Gutter:
    """``inner`` with a coloured mark before every line: the border of tool and command blocks.

    A left mark rather than a background fill or a box: nothing is padded to the width, so the
    scrollback reflows on resize, and copying a block's text picks up one character per line.
    """

    def __init__(self, inner: RenderableType, style: Style, mark: str = "▌") -> None:
        self.inner = inner
        self.style = style
        self.mark = mark

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        prefix = len(self.mark) + 1
        inner_options = options.update_width(max(1, options.max_width - prefix))
        lines = console.render_lines(self.inner, inner_options, pad=False)
        mark = Segment(self.mark, self.style)
        space = Segment(" ")
        newline = Segment.line()
        for line in lines:
            yield mark
            yield space
            yield from line
            yield newline

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)


class Trimmed:
    """``inner`` without the blank lines rich puts before or after some blocks (a list, a quote
    and a table start with one), so every transcript item starts and ends with its content and
    the transcript alone decides the spacing between items.
    """

    def __init__(self, inner: RenderableType, styles: RichStyles | None = None) -> None:
        self.inner = inner
        self.styles = styles
        """Named styles (the theme's ``markdown.*``) in force while ``inner`` renders."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.styles is None:
            lines = console.render_lines(self.inner, options, pad=False)
        else:
            with console.use_theme(self.styles):
                lines = console.render_lines(self.inner, options, pad=False)
        start, end = 0, len(lines)
        while start < end and is_blank(lines[start]):
            start += 1
        while end > start and is_blank(lines[end - 1]):
            end -= 1
        newline = Segment.line()
        for line in lines[start:end]:
            yield from line
            yield newline

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.inner)


def sanitize(text: str) -> str:
    """``text`` without escape sequences and control characters (tabs become 4 spaces)."""
    text = _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    return _CONTROL.sub("", text)


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` without the final empty one a trailing newline would make."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class Clipped:
    """The lines kept of a longer output, and how many were left out."""

    lines: Sequence[str]
    hidden: int


def clip_head(lines: Sequence[str], keep: int | None) -> Clipped:
    """The first ``keep`` lines (all of them when ``keep`` is None)."""
    if keep is None or len(lines) <= keep:
        return Clipped(lines, 0)
    return Clipped(lines[:keep], len(lines) - keep)


def clip_tail(lines: Sequence[str], keep: int | None) -> Clipped:
    """The last ``keep`` lines: command output ends with what matters (errors, summaries)."""
    if keep is None or len(lines) <= keep:
        return Clipped(lines, 0)
    return Clipped(lines[len(lines) - keep :], len(lines) - keep)


def more_lines_hint(hidden: int, o: RenderOptions, *, earlier: bool = False) -> Text:
    """The muted "… N more lines (ctrl+o to expand)" line."""
    noun = "line" if hidden == 1 else "lines"
    which = "earlier" if earlier else "more"
    text = Text(f"… {hidden} {which} {noun} (", style=o.theme.muted)
    text.append(o.expand_hint, style=o.theme.accent)
    text.append(" to expand)", style=o.theme.muted)
    return text


def display_path(path: str, o: RenderOptions) -> str:
    """``path`` as the user reads it: relative to the working directory, or with ``~``."""
    if not path:
        return path
    if o.cwd is not None and os.path.isabs(path):
        try:
            relative = Path(path).relative_to(o.cwd)
        except ValueError:
            pass
        else:
            return str(relative) if str(relative) != "." else path
    home = os.path.expanduser("~")
    if home not in ("~", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def _format_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def image_placeholder(image: ImageContent) -> str:
    """``[image: image/png, 640x480, 12.0 KB]`` for an image block (terminals get no pixels)."""
    from knightcode._tools.image_info import image_dimensions  # the tools package is heavy

    data = image.get("data", "")
    size = len(data) * 3 // 4 - data[-2:].count("=")
    parts = [image.get("mimeType", "image")]
    try:
        # The header is near the start; decoding the whole image would cost for nothing.
        head = base64.b64decode(data[:65536], validate=False)
    except (binascii.Error, ValueError):
        head = b""
    dimensions = image_dimensions(head, parts[0]) if head else None
    if dimensions is not None:
        parts.append(f"{dimensions[0]}x{dimensions[1]}")
    parts.append(_format_size(max(0, size)))
    return f"[image: {', '.join(parts)}]"


def text_and_images(content: str | Iterable[TextContent | ImageContent]) -> tuple[str, list[str]]:
    """The text of a content list (blocks joined by newlines) and a placeholder per image."""
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[str] = []
    for block in content:
        if block["type"] == "text":
            texts.append(block["text"])
        else:
            images.append(image_placeholder(block))
    return "\n".join(texts), images
