"""Dialogs shown in place of the editor (plugin ``ctx.ui`` and the built-in commands)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp

__all__ = ["DialogHost"]


class DialogHost:
    """Mounts one dialog at a time where the editor is and returns its answer."""

    def __init__(self, app: KnightcodeApp) -> None:
        self._app = app

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        self._app.transcript.notice(f"{title}: dialogs are not available yet", "warning")
        return None

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        self._app.transcript.notice(f"{title}: dialogs are not available yet", "warning")
        return False

    async def input(
        self, title: str, placeholder: str = "", *, timeout: float | None = None
    ) -> str | None:
        self._app.transcript.notice(f"{title}: dialogs are not available yet", "warning")
        return None

    async def editor(self, title: str, prefill: str = "") -> str | None:
        self._app.transcript.notice(f"{title}: dialogs are not available yet", "warning")
        return None
