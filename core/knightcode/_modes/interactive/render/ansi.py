"""Rich renderables to the text written into the terminal's scrollback.

Finished transcript items are rendered once, at the terminal width, and written above the live
region. Rich pads many lines to the full width with spaces (paragraphs, headings, code blocks);
here the trailing padding that carries no background is cut, so a later resize of the terminal
reflows the scrollback instead of wrapping every line in two. Lines end with a newline: the caller
converts for the terminal.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

from rich.console import Console, RenderableType
from rich.segment import Segment, Segments
from rich.style import Style

__all__ = ["ColorSystem", "is_blank", "line_count", "render_segments", "to_ansi"]

ColorSystem = Literal["standard", "256", "truecolor", "windows"]


@lru_cache(maxsize=16)
def _console(width: int, color_system: ColorSystem | None) -> Console:
    # A console per (width, colours): making one per item would cost more than small items.
    # Every detection (terminal, NO_COLOR, COLUMNS) is fixed here: the caller decides.
    return Console(
        width=width,
        color_system=color_system,
        force_terminal=color_system is not None,
        force_jupyter=False,
        force_interactive=False,
        no_color=False,
        legacy_windows=False,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=False,
    )


def _visible_trailing(style: Style | None) -> bool:
    """Whether spaces in ``style`` show something (a background, an underline, reverse video)."""
    if style is None:
        return False
    return bool(
        (style.bgcolor is not None and not style.bgcolor.is_default)
        or style.reverse
        or style.underline
        or style.strike
        or style.overline
        or style.underline2
    )


def _rstrip(line: list[Segment]) -> list[Segment]:
    """``line`` without its trailing unstyled blanks (control segments are kept)."""
    end = len(line)
    while end:
        segment = line[end - 1]
        if segment.control or _visible_trailing(segment.style):
            break
        stripped = segment.text.rstrip(" ")
        if stripped:
            return [*line[: end - 1], Segment(stripped, segment.style)]
        end -= 1
    return line[:end]


def is_blank(line: list[Segment]) -> bool:
    """Whether a rendered line shows nothing (spaces without a background count as nothing)."""
    return all(
        segment.control or (not segment.text.strip() and not _visible_trailing(segment.style))
        for segment in line
    )


def render_segments(renderable: RenderableType, width: int) -> list[list[Segment]]:
    """The lines of ``renderable`` at ``width``, trailing padding cut."""
    width = max(1, width)
    console = _console(width, None)
    options = console.options.update_width(width)
    return [_rstrip(line) for line in console.render_lines(renderable, options, pad=False)]


def _with_newlines(lines: Iterable[list[Segment]]) -> Iterable[Segment]:
    newline = Segment.line()
    for line in lines:
        yield from line
        yield newline


def to_ansi(
    renderable: RenderableType, width: int, color_system: ColorSystem | None = "truecolor"
) -> str:
    """``renderable`` rendered at ``width`` as text with escape sequences, one newline per line.

    ``color_system=None`` gives plain text (no escape sequences at all).
    """
    width = max(1, width)
    console = _console(width, color_system)
    lines = render_segments(renderable, width)
    with console.capture() as capture:
        console.print(Segments(_with_newlines(lines)), end="", crop=False)
    return capture.get()


def line_count(renderable: RenderableType, width: int) -> int:
    """How many terminal lines ``renderable`` takes at ``width``."""
    return len(render_segments(renderable, width))
