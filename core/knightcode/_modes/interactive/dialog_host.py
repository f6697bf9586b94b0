"""Dialogs shown in place of the editor (plugin ``ctx.ui`` and the built-in commands).

One dialog at a time replaces the editor, as in the reference; the editor (and what was typed in
it) comes back when the dialog resolves.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._llm.types import Model
    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._modes.interactive.settings_ui import SettingRow
    from knightcode._session.manager import SessionManager

__all__ = ["DialogHost"]


class DialogHost:
    """Mounts one dialog at a time where the editor is and returns its answer."""

    def __init__(self, app: KnightcodeApp) -> None:
        self._app = app

    def _missing(self, title: str) -> None:
        self._app.transcript.notice(f"{title}: dialogs are not available yet", "warning")

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        self._missing(title)
        return None

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        self._missing(title)
        return False

    async def input(
        self,
        title: str,
        placeholder: str = "",
        *,
        timeout: float | None = None,
        password: bool = False,
    ) -> str | None:
        self._missing(title)
        return None

    async def editor(self, title: str, prefill: str = "") -> str | None:
        self._missing(title)
        return None

    async def pick_model(self, models: Sequence[Model], current: Model) -> Model | None:
        self._missing("Model")
        return None

    async def scoped_models(
        self, available: Sequence[Model], enabled: Sequence[str]
    ) -> list[str] | None:
        self._missing("Scoped models")
        return None

    async def pick_session(self, directory: Path, current: Path | None) -> Path | None:
        self._missing("Resume")
        return None

    async def pick_tree_entry(self, session: SessionManager) -> str | None:
        self._missing("Tree")
        return None

    async def summarize_choice(self) -> tuple[bool, str | None] | None:
        self._missing("Summarize")
        return None

    async def settings(self, rows: Sequence[SettingRow]) -> list[tuple[SettingRow, str]]:
        self._missing("Settings")
        return []
