"""What every renderer is told about the screen and the user's display toggles."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from knightcode._modes.interactive.render.theme import DARK, Theme

__all__ = ["RenderOptions"]


@dataclass(frozen=True)
class RenderOptions:
    """The width to render at, the theme, and the collapse/expand state.

    Frozen so one value can be shared by every item of a reprint; toggling expansion makes a new
    one (``dataclasses.replace``) and the app reprints the transcript with it.
    """

    width: int
    theme: Theme = DARK
    expand_tools: bool = False
    """Tool output, ``!`` output and summaries shown whole (``app.tools.expand``)."""
    show_thinking: bool = False
    """Thinking blocks shown whole; otherwise one muted "Thinking…" line
    (``app.thinking.toggle``)."""
    cwd: Path | None = None
    """Paths under it are shown relative to it; others under the home directory with ``~``."""
    expand_hint: str = "ctrl+o"
    """The key text of ``app.tools.expand`` shown in "… N more lines (ctrl+o to expand)"; the app
    passes the user's binding from the key registry."""
