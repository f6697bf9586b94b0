"""A tiny host app: a container standing where the editor would be, and a task asking a dialog."""

from __future__ import annotations

import asyncio
from typing import Generic, TypeVar

from textual.app import App, ComposeResult
from textual.containers import Vertical

from knightcode._modes.interactive.dialogs.base import Dialog, ask

T = TypeVar("T")


class Host(App[None], Generic[T]):
    """Mounts one dialog through :func:`ask` and keeps its answer in ``answer``.

    Textual's command palette takes ``ctrl+p`` with priority, before any widget; the real app
    must switch it off too, or ``app.models.toggleProvider``/``app.session.togglePath`` never
    arrive.
    """

    ENABLE_COMMAND_PALETTE = False

    def __init__(self, dialog: Dialog[T]) -> None:
        super().__init__()
        self.dialog = dialog
        self.answer: T | None = None
        self.asking: asyncio.Task[T | None] | None = None

    def compose(self) -> ComposeResult:
        yield Vertical(id="slot")

    async def on_mount(self) -> None:
        self.asking = asyncio.create_task(ask(self.query_one("#slot", Vertical), self.dialog))

    async def finished(self) -> T | None:
        """The dialog's answer once it resolved (and was removed)."""
        assert self.asking is not None
        self.answer = await asyncio.wait_for(self.asking, 5)
        return self.answer
