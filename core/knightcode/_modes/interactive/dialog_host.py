"""Dialogs shown in place of the editor (plugin ``ctx.ui`` and the built-in commands).

One dialog at a time replaces the editor, as in the reference; the editor (and what was typed in
it) comes back when the dialog resolves. A second dialog asked for while one is open waits for
it (a plugin may ask from a hook while the user is in ``/model``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from textual import events

if TYPE_CHECKING:
    from pathlib import Path

    from knightcode._llm.types import Model
    from knightcode._modes.interactive.app import KnightcodeApp
    from knightcode._modes.interactive.dialogs.base import Dialog
    from knightcode._modes.interactive.dialogs.settings_dialog import SettingValue
    from knightcode._session.manager import SessionManager

__all__ = ["DialogHost"]

T = TypeVar("T")


class DialogHost:
    """Mounts one dialog at a time where the editor is and returns its answer."""

    def __init__(self, app: KnightcodeApp) -> None:
        self._app = app
        self._lock = asyncio.Lock()
        #: Keys typed while a dialog is being mounted (set to a list meanwhile): they belong to
        #: the dialog, not to the editor that still has the focus.
        self.held_keys: list[events.Key] | None = None

    @property
    def open(self) -> bool:
        """Whether a dialog is showing (the editor is hidden)."""
        return self._lock.locked()

    async def show(self, dialog: Dialog[T]) -> T | None:
        """Show ``dialog`` instead of the editor until it resolves."""
        async with self._lock:
            app = self._app
            editor = app.editor
            self.held_keys = []
            try:
                editor.display = False
                await app.query_one("#input").mount(dialog)
                # Now, not later (Widget.focus defers): the held keys must reach the dialog.
                app.screen.set_focus(dialog.focus_target())
            finally:
                held, self.held_keys = self.held_keys, None
            for key in held:  # in the order typed, after the dialog has the focus
                app.post_message(events.Key(key.key, key.character))
            try:
                return await dialog.result
            finally:
                if dialog.is_attached:
                    await dialog.remove()
                editor.display = True
                app.screen.set_focus(editor)

    # --- plugin dialogs (ctx.ui) --------------------------------------------------------------

    async def select(
        self, title: str, options: Sequence[str], *, timeout: float | None = None
    ) -> str | None:
        from knightcode._modes.interactive.dialogs.select import SelectDialog

        return await self.show(
            SelectDialog(title, list(options), keys=self._app.registry, timeout=timeout)
        )

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        from knightcode._modes.interactive.dialogs.select import ConfirmDialog

        answer = await self.show(
            ConfirmDialog(title, message, keys=self._app.registry, timeout=timeout)
        )
        return bool(answer)

    async def input(
        self,
        title: str,
        placeholder: str = "",
        *,
        timeout: float | None = None,
        password: bool = False,
    ) -> str | None:
        from knightcode._modes.interactive.dialogs.select import InputDialog

        return await self.show(
            InputDialog(
                title, placeholder, password=password, keys=self._app.registry, timeout=timeout
            )
        )

    async def editor(self, title: str, prefill: str = "") -> str | None:
        from knightcode._modes.interactive.dialogs.select import EditorDialog

        return await self.show(EditorDialog(title, prefill, keys=self._app.registry))

    # --- built-in commands --------------------------------------------------------------------

    async def pick_model(self, models: Sequence[Model], current: Model) -> Model | None:
        """The model selector: every chat model, unusable ones with the reason."""
        from knightcode._modes.interactive.dialogs.model_selector import ModelItem, ModelSelector

        registry = self._app.agent.model_registry
        available = {m.ref for m in registry.available()}
        items = [
            ModelItem(
                provider=m.provider,
                id=m.id,
                name=m.name,
                context_window=m.context_window,
                available=m.ref in available,
                reason=None
                if m.ref in available
                else registry.unavailable_reason(m.provider, m.id)  # e.g. not loaded: /llama
                or f"no key for {m.provider}: /login",
                current=m.ref == current.ref,
            )
            for m in models
            if m.kind == "chat"
        ]
        choice = await self.show(ModelSelector(items, keys=self._app.registry))
        if choice is None:
            return None
        return next((m for m in models if m.ref == choice.item.full_id), None)

    async def scoped_models(
        self, available: Sequence[Model], enabled: Sequence[str]
    ) -> list[str] | None:
        """The ``enabledModels`` editor; an empty list means every available model."""
        from knightcode._modes.interactive.dialogs.model_selector import ModelItem
        from knightcode._modes.interactive.dialogs.scoped_models import ScopedModelsSelector

        items = [
            ModelItem(m.provider, m.id, m.name, m.context_window, current=m.ref == self._current)
            for m in available
        ]
        result = await self.show(
            ScopedModelsSelector(items, list(enabled) or None, keys=self._app.registry)
        )
        if result is None:
            return None
        return list(result.enabled) if result.enabled is not None else []

    @property
    def _current(self) -> str:
        return self._app.agent.model.ref

    async def pick_session(self, directory: Path, current: Path | None) -> Path | None:
        from knightcode._modes.interactive.dialogs.session_picker import (
            SessionPicker,
            directory_loader,
        )

        async def rename(path: Path, name: str) -> None:
            from knightcode._session.manager import SessionManager

            with SessionManager.open(path) as session:
                session.append_session_info(name)

        async def delete(path: Path) -> None:
            from knightcode._session.listing import read_header

            header = await asyncio.to_thread(read_header, path)
            await asyncio.to_thread(path.unlink)
            # Plugins remove what they kept for it (builtin:web-tools: the scratchpad).
            await self._app.host.hooks.session_delete(session_file=path, header=header)

        picker = SessionPicker(
            directory_loader(directory),
            rename=rename,
            delete=delete,
            current=current,
            keys=self._app.registry,
        )
        return await self.show(picker)

    async def pick_tree_entry(self, session: SessionManager) -> str | None:
        from knightcode._modes.interactive.dialogs.tree_navigator import TreeNavigator

        async def on_label(entry_id: str, label: str | None) -> None:
            session.append_label(entry_id, label)

        navigator = TreeNavigator(
            session.get_entries(),
            session.leaf_id,
            dict(session.labels),
            dict(session.label_timestamps),
            on_label=on_label,
            filter_mode=self._app.settings_model().tree_filter_mode,
            keys=self._app.registry,
        )
        return await self.show(navigator)

    async def summarize_choice(self) -> tuple[bool, str | None] | None:
        """Summarize the branch being left? No / yes / yes with instructions (an editor)."""
        from knightcode._modes.interactive.dialogs.tree_navigator import Summarize, SummarizeChoice

        choice = await self.show(SummarizeChoice(keys=self._app.registry))
        if choice is None:
            return None
        if choice is Summarize.NO:
            return (False, None)
        if choice is Summarize.YES:
            return (True, None)
        instructions = await self.editor("Instructions for the summary")
        return None if instructions is None else (True, instructions)

    async def settings(
        self, on_change: Callable[[str, SettingValue], None] | None = None
    ) -> dict[str, SettingValue]:
        """``/settings``; ``on_change`` hears each change as it is made (a theme's preview)."""
        from knightcode._modes.interactive.dialogs.settings_dialog import (
            SettingsDialog,
            setting_rows,
        )
        from knightcode._types.messages import THINKING_LEVELS

        levels = THINKING_LEVELS if self._app.agent.model.reasoning else ("off",)
        themes = self._app.theme_state
        rows = setting_rows(self._app.settings, levels, themes=themes.names, theme=themes.name)
        dialog = SettingsDialog(rows, keys=self._app.registry, on_change=on_change)
        changes = await self.show(dialog)
        return changes or {}
