"""Helpers of the rendering tests: visible text and the style of a piece of it."""

from __future__ import annotations

from dataclasses import replace

from rich.console import RenderableType
from rich.style import Style

from knightcode._modes.interactive.render.ansi import render_segments, to_ansi
from knightcode._modes.interactive.render.options import RenderOptions
from knightcode._modes.interactive.render.theme import DARK

WIDTH = 80


def opts(**changes):
    return replace(RenderOptions(width=WIDTH, theme=DARK), **changes)


def lines(renderable: RenderableType, width: int = WIDTH) -> list[str]:
    """The visible lines (no escape sequences, trailing padding cut)."""
    return to_ansi(renderable, width, None).split("\n")[:-1]


def text(renderable: RenderableType, width: int = WIDTH) -> str:
    return "\n".join(lines(renderable, width))


def style_of(renderable: RenderableType, needle: str, width: int = WIDTH) -> Style:
    """The style of the first segment whose text contains ``needle``."""
    for line in render_segments(renderable, width):
        for segment in line:
            if needle in segment.text:
                return segment.style or Style()
    raise AssertionError(f"{needle!r} not rendered")


def line_styles(renderable: RenderableType, needle: str, width: int = WIDTH) -> list[Style]:
    """The styles of every segment of the first line containing ``needle``."""
    for line in render_segments(renderable, width):
        if needle in "".join(segment.text for segment in line):
            return [segment.style or Style() for segment in line]
    raise AssertionError(f"{needle!r} not rendered")


def color(style: Style) -> str | None:
    return style.color.name if style.color is not None else None
