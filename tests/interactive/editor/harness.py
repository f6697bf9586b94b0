"""A tiny app around the prompt editor for Textual's pilot, recording what reaches the app."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult

from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.completion import CommandInfo, CompletionMenu
from knightcode._modes.interactive.editor import PromptEditor
from knightcode._modes.interactive.file_index import FileIndex


class EditorApp(App[None], inherit_bindings=False):
    """The editor (focused) under a completion menu; no bindings of Textual's own.

    ``bubbled`` lists the keys that reached the app (those the editor did not handle).
    """

    def __init__(
        self,
        registry: KeyRegistry | None = None,
        *,
        history: Iterable[str] = (),
        commands: Sequence[CommandInfo] = (),
        cwd: Path | None = None,
        file_index: FileIndex | None = None,
    ) -> None:
        super().__init__()
        self.registry = registry if registry is not None else KeyRegistry(None, platform="posix")
        self.menu = CompletionMenu()
        self.editor = PromptEditor(
            self.registry,
            history=history,
            commands=commands,
            cwd=cwd,
            file_index=file_index,
            menu=self.menu,
        )
        self.bubbled: list[str] = []
        self.submitted: list[str] = []
        self.copied: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.menu
        yield self.editor

    def on_key(self, event: events.Key) -> None:
        self.bubbled.append(event.key)

    def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        self.submitted.append(message.text)

    def on_prompt_editor_copy_requested(self, message: PromptEditor.CopyRequested) -> None:
        self.copied.append(message.text)


def put(editor: PromptEditor, text: str, cursor: tuple[int, int] | None = None) -> None:
    """Load ``text`` with the cursor at ``cursor`` (default: the end)."""
    editor.load_text(text)
    editor.move_cursor(cursor if cursor is not None else editor.document.end)
