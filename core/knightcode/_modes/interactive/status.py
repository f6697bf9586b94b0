"""The lines above the editor: what the agent is doing (spinner, retry countdown), plugin widgets
and status entries, and the messages queued for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from rich.console import RenderableType

    from knightcode._keys.registry import KeyRegistry
    from knightcode._modes.interactive.render import RenderOptions

__all__ = ["SPINNER", "StatusArea"]

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_SECONDS = 0.08

Show = Callable[[str, "RenderableType | None"], None]


class StatusArea:
    """Owns ``#status`` and ``#widgets``; :meth:`tick` animates them (the app's frame timer).

    :param show: puts a renderable into a widget by selector (None hides it)
    :param registry: for the interrupt key named in the hint
    :param options: the current render options (the retry line's theme)
    """

    def __init__(
        self, show: Show, registry: KeyRegistry, options: Callable[[], RenderOptions]
    ) -> None:
        self._show = show
        self._registry = registry
        self._options = options
        self._text = ""
        self._spinner = 0
        self.working_since: float | None = None
        self._retry: tuple[int, int, float, str] | None = None
        self._plugin_status: dict[str, str] = {}
        self._plugin_widgets: dict[str, list[str]] = {}
        self._queued: tuple[list[str], list[str]] = ([], [])

    # --- the agent's state ------------------------------------------------------------------

    def set_working(self, text: str | None) -> None:
        """Show ``text`` with a spinner (None: idle, nothing shown)."""
        if text is None:
            self.working_since = None
            self._text = ""
        else:
            if self.working_since is None:
                self.working_since = time.monotonic()
            self._text = text
        self._draw_status()

    def retrying(self, attempt: int, attempts: int, delay_ms: int, error: str) -> None:
        """A failed request is retried after ``delay_ms``: count it down."""
        self._retry = (attempt, attempts, time.monotonic() + delay_ms / 1000, error)
        self.set_working("Retrying")

    def retry_over(self) -> None:
        self._retry = None

    def tick(self) -> None:
        """Advance the spinner and the countdown (called every frame; redraws only when the
        spinner moves on, every :data:`SPINNER_SECONDS`).
        """
        if self.working_since is None:
            return
        step = int((time.monotonic() - self.working_since) / SPINNER_SECONDS) % len(SPINNER)
        if step != self._spinner:
            self._spinner = step
            self._draw_status()

    def _draw_status(self) -> None:
        if self.working_since is None:
            self._show("#status", None)
            return
        hint = "/".join(self._registry.keys_for("app.interrupt")) or "escape"
        if self._retry is not None:
            from knightcode._modes.interactive.render import render_retry

            attempt, attempts, deadline, error = self._retry
            left = deadline - time.monotonic()
            line = render_retry(attempt, attempts, left, error, self._options())
            line.append(f"  ({hint} to cancel)", style="dim")
            self._show("#status", line)
            return
        self._show(
            "#status",
            Text.assemble(
                (SPINNER[self._spinner] + " ", "cyan"),
                self._text,
                (f"  ({hint} to interrupt)", "dim"),
            ),
        )

    # --- plugins and queues -----------------------------------------------------------------

    def set_queued(self, steering: Sequence[str], follow_up: Sequence[str]) -> None:
        self._queued = (list(steering), list(follow_up))
        self.draw_widgets()

    def set_plugin_status(self, key: str, text: str | None) -> None:
        if text is None:
            self._plugin_status.pop(key, None)
        else:
            self._plugin_status[key] = text
        self.draw_widgets()

    def set_plugin_widget(self, key: str, lines: Sequence[str] | None) -> None:
        if lines is None:
            self._plugin_widgets.pop(key, None)
        else:
            self._plugin_widgets[key] = list(lines)
        self.draw_widgets()

    def take_plugin_state(self, other: StatusArea) -> None:
        """Show what plugins set in ``other`` (the app before a fullscreen switch)."""
        self._plugin_status = dict(other._plugin_status)
        self._plugin_widgets = {key: list(lines) for key, lines in other._plugin_widgets.items()}

    def draw_widgets(self) -> None:
        """Show the plugin widgets, queued messages and plugin statuses above the editor."""
        lines: list[Text] = []
        for key in sorted(self._plugin_widgets):
            lines.extend(Text(line) for line in self._plugin_widgets[key])
        steering, follow_up = self._queued
        lines.extend(Text(f"Steering: {text}", style="yellow") for text in steering)
        lines.extend(Text(f"Follow-up: {text}", style="yellow") for text in follow_up)
        if self._plugin_status:
            lines.append(Text("  ".join(self._plugin_status.values()), style="dim"))
        self._show("#widgets", Text("\n").join(lines) if lines else None)
