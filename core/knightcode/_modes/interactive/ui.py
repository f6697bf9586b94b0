"""``InteractiveUI``: the plugins' ``ctx.ui`` in the terminal — native dialogs and notices."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._plugins.context import NotifyLevel

__all__ = ["InteractiveUI"]


class InteractiveUI:
    """Implements :class:`knightcode._plugins.context.ExtensionUI` for the terminal UI."""

    def __init__(self, app: KnightcodeApp) -> None:
        self._app = app

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        return await self._app.dialogs.select(title, options, timeout=timeout)

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        return await self._app.dialogs.confirm(title, message, timeout=timeout)

    async def input(
        self,
        title: str,
        placeholder: str = "",
        *,
        timeout: float | None = None,
        secret: bool = False,
    ) -> str | None:
        return await self._app.dialogs.input(title, placeholder, timeout=timeout, password=secret)

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return await self._app.dialogs.editor(title, prefill)

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self._app.plugin_notice(message, level)

    def set_status(self, key: str, text: str | None) -> None:
        self._app.set_plugin_status(key, text)

    def set_widget(self, key: str, lines: Sequence[str] | None) -> None:
        self._app.set_plugin_widget(key, lines)

    def set_title(self, title: str) -> None:
        self._app.set_terminal_title(title)

    def set_editor_text(self, text: str) -> None:
        self._app.set_editor_text(text)
