r"""The prompt editor: a Textual ``TextArea`` driven entirely by the keybinding registry.

Every key goes through :class:`~knightcode._keys.registry.KeyRegistry` in the ``main`` context:
``tui.editor.*`` and ``tui.input.*`` actions are performed here and the event stops; keys bound to
anything else (``app.*``, plugin shortcuts) bubble to the app untouched; unbound printable keys
are typed.  TextArea's own key handling never runs (``prevent_default`` on every key), so a key
the user moved elsewhere cannot keep its Textual meaning (``ctrl+k`` kills to the end of the
line as the spec says, ``ctrl+c`` reaches the app's ``app.clear``).

Behaviour follows the reference's editor: emacs kill ring, history on up/down at the first/last
line (here the draft is kept), jump to character, ``/``/``@``/Tab completion, collapsed large
pastes, ``\`` + Enter as a newline for terminals without ``shift+enter``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal

from rich.style import Style
from textual import events
from textual.message import Message
from textual.widgets import TextArea
from textual.widgets.text_area import Location, Selection
from textual.worker import Worker, WorkerState

from knightcode._keys.actions import MAIN, SELECT
from knightcode._keys.registry import KeyRegistry
from knightcode._keys.textual_keys import key_ids
from knightcode._modes.interactive import words
from knightcode._modes.interactive.completion import (
    CommandInfo,
    CompletionItem,
    CompletionMenu,
    CompletionProvider,
    Suggestions,
    completion_insert,
)
from knightcode._modes.interactive.external_editor import (
    ExternalEditorError,
    editor_command,
    run_external_editor,
)
from knightcode._modes.interactive.file_index import FileIndex
from knightcode._modes.interactive.history import PromptHistory
from knightcode._modes.interactive.kill_ring import KillRing
from knightcode._modes.interactive.paste import MARKER, PasteStore, clean_paste

__all__ = ["THINKING_LEVELS", "PromptEditor"]

THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")
"""The levels :meth:`PromptEditor.border_level` knows a border colour for."""

_FILE_INDEX_GROUP = "file-index"
_MENU_PAGE = 7

Direction = Literal["forward", "backward"]


class PromptEditor(TextArea, inherit_bindings=False):
    """The multi-line prompt input.

    :param registry: the keybinding registry (shared with the app; :meth:`reload_keys` after
        the app reloads it)
    :param history: the session's earlier user messages, oldest first
    :param commands: the slash commands for ``/`` completion
    :param cwd: the project directory (Tab paths, ``@`` files)
    :param file_index: the ``@`` file list, when the app shares one between editors
    :param menu: a completion menu to keep up to date (the ``CompletionChanged`` message is
        posted either way)
    """

    DEFAULT_CSS = """
    PromptEditor, PromptEditor:focus {
        height: auto;
        min-height: 1;
        max-height: 14;
        padding: 0 1;
        background: transparent;
        border: none;
        border-top: solid $secondary;
        border-bottom: solid $secondary;
    }
    PromptEditor.-thinking-off, PromptEditor.-thinking-off:focus {
        border-top: solid #606060; border-bottom: solid #606060;
    }
    PromptEditor.-thinking-minimal, PromptEditor.-thinking-minimal:focus {
        border-top: solid #8a8a8a; border-bottom: solid #8a8a8a;
    }
    PromptEditor.-thinking-low, PromptEditor.-thinking-low:focus {
        border-top: solid #5f87af; border-bottom: solid #5f87af;
    }
    PromptEditor.-thinking-medium, PromptEditor.-thinking-medium:focus {
        border-top: solid #5fafaf; border-bottom: solid #5fafaf;
    }
    PromptEditor.-thinking-high, PromptEditor.-thinking-high:focus {
        border-top: solid #af87d7; border-bottom: solid #af87d7;
    }
    PromptEditor.-thinking-xhigh, PromptEditor.-thinking-xhigh:focus {
        border-top: solid #d75f87; border-bottom: solid #d75f87;
    }
    """

    class Submitted(Message):
        """The user submitted the prompt (``tui.input.submit``); the editor is already empty.

        :param text: the prompt, paste markers expanded, surrounding whitespace stripped.  A
            ``!cmd``/``!!cmd`` prompt is reported as is: the app runs it (see
            :attr:`shell_command`).
        """

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

        @property
        def shell_command(self) -> tuple[str, bool] | None:
            """``(command, send_output)`` for ``!cmd`` (sent to the model) and ``!!cmd`` (not
            sent), None for an ordinary prompt or a bare ``!``.
            """
            if not self.text.startswith("!"):
                return None
            excluded = self.text.startswith("!!")
            command = self.text[2 if excluded else 1 :].strip()
            return (command, not excluded) if command else None

    class CopyRequested(Message):
        """``tui.input.copy`` with text selected: the app puts ``text`` on the clipboard."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class CompletionChanged(Message):
        """The completion menu's content changed; no items means it closed."""

        def __init__(self, items: tuple[CompletionItem, ...], selected: int) -> None:
            super().__init__()
            self.items = items
            self.selected = selected

    def __init__(
        self,
        registry: KeyRegistry,
        *,
        history: Iterable[str] = (),
        commands: Sequence[CommandInfo] = (),
        cwd: Path | None = None,
        file_index: FileIndex | None = None,
        menu: CompletionMenu | None = None,
        placeholder: str = "",
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(
            "",
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder=placeholder,
            id=id,
            classes=classes,
        )
        self.registry = registry
        self.prompt_history = PromptHistory(history)
        self.kill_ring = KillRing()
        self.pastes = PasteStore()
        root = cwd if cwd is not None else Path.cwd()
        self.completer = CompletionProvider(root, commands, file_index)
        self.menu = menu
        self._actions_cache: dict[tuple[str, str], tuple[str, ...]] = {}
        self._last: Literal["kill", "yank"] | None = None
        self._last_before: Literal["kill", "yank"] | None = None
        self._yanked: tuple[Location, Location] = ((0, 0), (0, 0))
        self._jump: Direction | None = None
        self._border_styles: tuple[Style | None, Style | None] = (None, None)
        """The theme's thinking-level and bash-mode border colours (:meth:`border_level`)."""
        self._bash_mode = False
        self._completion: Suggestions | None = None
        self._selected = 0
        self._forced = False
        self._handlers: dict[str, Callable[[], bool]] = {
            "tui.editor.cursorUp": self._cursor_up,
            "tui.editor.cursorDown": self._cursor_down,
            "tui.editor.historyPrevious": self._history_previous,
            "tui.editor.historyNext": self._history_next,
            "tui.editor.cursorLeft": self._moving(self.action_cursor_left),
            "tui.editor.cursorRight": self._moving(self.action_cursor_right),
            "tui.editor.cursorWordLeft": self._moving(self._word_left),
            "tui.editor.cursorWordRight": self._moving(self._word_right),
            "tui.editor.cursorLineStart": self._moving(self._line_start),
            "tui.editor.cursorLineEnd": self._moving(self._line_end),
            "tui.editor.jumpForward": lambda: self._arm_jump("forward"),
            "tui.editor.jumpBackward": lambda: self._arm_jump("backward"),
            "tui.editor.pageUp": self._moving(self.action_cursor_page_up),
            "tui.editor.pageDown": self._moving(self.action_cursor_page_down),
            "tui.editor.deleteCharBackward": self._delete_backward,
            "tui.editor.deleteCharForward": self._delete_forward,
            "tui.editor.deleteWordBackward": lambda: self._kill("word", backward=True),
            "tui.editor.deleteWordForward": lambda: self._kill("word", backward=False),
            "tui.editor.deleteToLineStart": lambda: self._kill("line", backward=True),
            "tui.editor.deleteToLineEnd": lambda: self._kill("line", backward=False),
            "tui.editor.yank": self._yank,
            "tui.editor.yankPop": self._yank_pop,
            "tui.editor.undo": self._undo,
            "tui.input.newLine": self._new_line,
            "tui.input.submit": self._submit,
            "tui.input.tab": self._tab,
            "tui.input.copy": self._copy,
        }

    # --- the app's interface -------------------------------------------------------------

    @property
    def handled_actions(self) -> frozenset[str]:
        """The actions the editor performs itself (every ``tui.editor.*``/``tui.input.*``)."""
        return frozenset(self._handlers)

    def reload_keys(self) -> None:
        """Forget cached key look-ups; call after ``registry.reload()``."""
        self._actions_cache.clear()

    def set_commands(self, commands: Sequence[CommandInfo]) -> None:
        """Replace the ``/`` commands (plugins were loaded or reloaded)."""
        self.completer.commands = tuple(commands)

    def set_history(self, entries: Iterable[str]) -> None:
        """Replace the history with a session's user messages, oldest first."""
        self.prompt_history.replace(entries)

    @property
    def expanded_text(self) -> str:
        """The text with collapsed pastes expanded: what a submit would send."""
        return self.pastes.expand(self.text)

    def set_text(self, text: str) -> None:
        """Replace the whole text (undoable), cursor at the end; e.g. restoring queued messages."""
        self._close_completion()
        self.prompt_history.reset()
        self._replace_all(text)

    def clear_prompt(self) -> None:
        """Empty the editor and forget its pastes and undo history (``app.clear``)."""
        self._close_completion()
        self.prompt_history.reset()
        self.pastes.clear()
        self._jump = None
        self.load_text("")

    def border_level(
        self, level: str, style: Style | None = None, bash: Style | None = None
    ) -> None:
        """Colour the border for the thinking ``level``: sets the class ``-thinking-<level>``;
        a theme's ``style`` (its ``thinking*`` token) wins over the class's colour, and while
        the text is a ``!`` command the theme's ``bash`` colour (``bashMode``) shows instead.
        """
        for known in self.classes:
            if known.startswith("-thinking-"):
                self.remove_class(known)
        self.add_class(f"-thinking-{level}")
        self._border_styles = (style, bash)
        self._paint_border()

    def _paint_border(self) -> None:
        thinking, bash = self._border_styles
        style = bash if bash is not None and self.text.startswith("!") else thinking
        if style is None or style.color is None:
            return
        from textual.color import Color

        colour = Color.from_rich_color(style.color)
        self.styles.border_top = ("solid", colour)
        self.styles.border_bottom = ("solid", colour)

    def on_text_area_changed(self, _event: TextArea.Changed) -> None:
        """Bash mode shows in the border as soon as the text starts with ``!`` (and goes)."""
        bash_mode = self.text.startswith("!")
        if bash_mode != self._bash_mode:
            self._bash_mode = bash_mode
            self._paint_border()

    @property
    def completion_items(self) -> tuple[CompletionItem, ...]:
        """The choices of the open completion menu (empty when closed)."""
        return self._completion.items if self._completion is not None else ()

    @property
    def completion_selected(self) -> int:
        """The index of the highlighted choice."""
        return self._selected

    def edit_externally(self, external_editor: str | None = None) -> bool:
        """Edit the prompt in an external editor; call inside ``App.suspend()``.

        :param external_editor: the ``externalEditor`` setting; ``$VISUAL``, ``$EDITOR`` and
            ``nano`` are tried after it
        :returns: True when the text was replaced; on failure the text is unchanged and a
            notification says why
        """
        command = editor_command(external_editor, os.environ)
        try:
            edited = run_external_editor(self.expanded_text, command)
        except ExternalEditorError as exc:
            self.notify(str(exc), severity="warning")
            return False
        self.pastes.clear()
        self.set_text(edited)
        return True

    # --- key dispatch ----------------------------------------------------------------------

    def _actions(self, key: str, context: str) -> tuple[str, ...]:
        cached = self._actions_cache.get((key, context))
        if cached is None:
            cached = self.registry.actions_for(key, context)
            self._actions_cache[(key, context)] = cached
        return cached

    async def _on_key(self, event: events.Key) -> None:
        # Never let TextArea's (or Widget's) own key handling run: the registry decides.
        event.prevent_default()
        if self.read_only:
            return
        self._restart_blink()
        if self._dispatch(event):
            event.stop()

    def _dispatch(self, event: events.Key) -> bool:
        """Perform the key's action; False lets the key bubble to the app."""
        ids = key_ids(event)
        # Kill accumulation and yank-pop look at the command before this one only.
        self._last_before, self._last = self._last, None
        printable = event.character if event.is_printable else None
        if self._jump is not None:
            direction, self._jump = self._jump, None
            if any(a.startswith("tui.editor.jump") for k in ids for a in self._actions(k, MAIN)):
                return True  # the jump key again cancels
            if printable:
                self._jump_to(printable, direction)
                return True
        if self._completion is not None:
            handled = self._menu_key(ids)
            if handled is not None:
                return handled
        for key in ids:
            if self.registry.shortcut_for(key) is not None:
                return False
            actions = self._actions(key, MAIN)
            if not actions:
                continue
            for action in actions:
                handler = self._handlers.get(action)
                if handler is not None and self._applies(action, actions) and handler():
                    return True
            return False
        if printable:
            self._type(printable)
            return True
        return False

    def _applies(self, action: str, actions: tuple[str, ...]) -> bool:
        """Whether an editor action takes a key it shares with an app action: ``ctrl+d`` deletes
        forward only when there is text (else ``app.exit`` gets it), ``ctrl+c`` copies only a
        selection (else ``app.clear`` gets it).
        """
        if action == "tui.editor.deleteCharForward" and len(actions) > 1:
            return bool(self.text)
        return True

    def _menu_key(self, ids: tuple[str, ...]) -> bool | None:
        """Keys of the open completion menu (``tui.select.*``, Tab); None: not a menu key."""
        for key in ids:
            main = self._actions(key, MAIN)
            if "tui.input.copy" in main:
                return None
            select = self._actions(key, SELECT)
            if "tui.select.up" in select:
                return self._move_selection(-1)
            if "tui.select.down" in select:
                return self._move_selection(1)
            if "tui.select.pageUp" in select:
                return self._move_selection(-_MENU_PAGE)
            if "tui.select.pageDown" in select:
                return self._move_selection(_MENU_PAGE)
            if "tui.select.cancel" in select:
                self._close_completion()
                return True
            if "tui.select.confirm" in select or "tui.input.tab" in main:
                return self._accept("tui.select.confirm" in select)
        return None

    # --- cursor movement --------------------------------------------------------------------

    def _moving(self, move: Callable[[], None]) -> Callable[[], bool]:
        def perform() -> bool:
            self._close_completion()
            move()
            return True

        return perform

    @property
    def _row_text(self) -> str:
        return self.document[self.cursor_location[0]]

    def _word_left(self) -> None:
        row, col = self.cursor_location
        if col == 0 and row > 0:
            self.move_cursor((row - 1, len(self.document[row - 1])))
        else:
            self.move_cursor((row, words.word_left(self._row_text, col)))

    def _word_right(self) -> None:
        row, col = self.cursor_location
        if col >= len(self._row_text) and row < self.document.line_count - 1:
            self.move_cursor((row + 1, 0))
        else:
            self.move_cursor((row, words.word_right(self._row_text, col)))

    def _line_start(self) -> None:
        self.move_cursor((self.cursor_location[0], 0))

    def _line_end(self) -> None:
        self.move_cursor((self.cursor_location[0], len(self._row_text)))

    def _cursor_up(self) -> bool:
        self._close_completion()
        location = self.cursor_location
        if not self.navigator.is_first_wrapped_line(location):
            self.action_cursor_up()
        elif self.prompt_history.browsing or location == (0, 0):
            self._history_previous()
        else:
            self.move_cursor((0, 0))
        return True

    def _cursor_down(self) -> bool:
        self._close_completion()
        if not self.navigator.is_last_wrapped_line(self.cursor_location):
            self.action_cursor_down()
        elif self.prompt_history.browsing:
            self._history_next()
        else:
            self.move_cursor(self.document.end)
        return True

    def _history_previous(self) -> bool:
        self._close_completion()
        entry = self.prompt_history.previous(self.text)
        if entry is not None:
            self._replace_all(entry)
        return True

    def _history_next(self) -> bool:
        self._close_completion()
        entry = self.prompt_history.next()
        if entry is not None:
            self._replace_all(entry)
        return True

    def _arm_jump(self, direction: Direction) -> bool:
        self._close_completion()
        self._jump = direction
        return True

    def _jump_to(self, char: str, direction: Direction) -> None:
        target = words.find_char(self.text.split("\n"), self.cursor_location, char, direction)
        if target is not None:
            self.move_cursor(target)

    # --- editing ------------------------------------------------------------------------------

    def _edited(self) -> None:
        """After any change the user made: history browsing ends, completion follows the text."""
        self.prompt_history.reset()
        self._update_completion()

    def _type(self, text: str) -> None:
        start, end = self.selection
        self.replace(text, start, end, maintain_selection_offset=False)
        self._edited()

    def _replace_all(self, text: str) -> None:
        self.history.checkpoint()
        self.replace(text, (0, 0), self.document.end, maintain_selection_offset=False)
        self.history.checkpoint()
        self.move_cursor(self.document.end)

    def _marker_around(self, row: int, col: int, *, before: bool) -> tuple[int, int] | None:
        """The columns of a paste marker ending at (``before``) or starting at the cursor, or
        holding it, so that one key deletes the whole marker.
        """
        for match in MARKER.finditer(self.document[row]):
            if not self.pastes.is_marker(match):
                continue
            start, end = match.span()
            inside = start < col < end
            if inside or (before and end == col) or (not before and start == col):
                return start, end
        return None

    def _delete_backward(self) -> bool:
        row, col = self.cursor_location
        span = self._marker_around(row, col, before=True) if self.selection.is_empty else None
        if span is not None:
            self.delete((row, span[0]), (row, span[1]), maintain_selection_offset=False)
        else:
            self.action_delete_left()
        self._edited()
        return True

    def _delete_forward(self) -> bool:
        row, col = self.cursor_location
        span = self._marker_around(row, col, before=False) if self.selection.is_empty else None
        if span is not None:
            self.delete((row, span[0]), (row, span[1]), maintain_selection_offset=False)
        else:
            self.action_delete_right()
        self._edited()
        return True

    def _kill(self, unit: Literal["word", "line"], *, backward: bool) -> bool:
        """Delete a word or to the line's start/end into the kill ring (a newline when the
        cursor is already at the line's edge), growing the last entry after another kill.
        """
        span = words.kill_range(
            self.text.split("\n"), self.cursor_location, unit, backward=backward
        )
        if span is None:
            return True
        start, end = span
        killed = self.get_text_range(start, end)
        self.kill_ring.push(killed, prepend=backward, accumulate=self._last_before == "kill")
        self.history.checkpoint()
        self.delete(start, end, maintain_selection_offset=False)
        self._last = "kill"
        self._edited()
        return True

    def _yank(self) -> bool:
        text = self.kill_ring.peek()
        if text is None:
            return True
        self.history.checkpoint()
        start, end = self.selection
        result = self.replace(text, start, end, maintain_selection_offset=False)
        self._yanked = (start, result.end_location)
        self._last = "yank"
        self._edited()
        return True

    def _yank_pop(self) -> bool:
        if self._last_before != "yank" or len(self.kill_ring) < 2:
            return True
        self.kill_ring.rotate()
        text = self.kill_ring.peek() or ""
        start, end = self._yanked
        result = self.replace(text, start, end, maintain_selection_offset=False)
        self._yanked = (start, result.end_location)
        self._last = "yank"
        self._edited()
        return True

    def _undo(self) -> bool:
        self._close_completion()
        self.prompt_history.reset()
        if self.history.undo_stack:
            # Textual 8.2.8 re-checks the scrollbars while undoing, with the cursor still where
            # the undone edit left it: outside a document that shrank, which raises.  The undo
            # restores the cursor of its edit anyway.
            self.selection = Selection.cursor((0, 0))
            self.undo()
        return True

    def _new_line(self) -> bool:
        self._close_completion()
        self.history.checkpoint()
        self._type("\n")
        return True

    def _submit(self) -> bool:
        row, col = self.cursor_location
        if col > 0 and self._row_text[col - 1] == "\\":
            # Terminals that cannot send shift+enter: a trailing backslash asks for a newline.
            self.delete((row, col - 1), (row, col), maintain_selection_offset=False)
            return self._new_line()
        text = self.expanded_text.strip()
        if not text:
            return True
        self.prompt_history.add(text)
        self.clear_prompt()
        self.post_message(self.Submitted(text))
        return True

    def _copy(self) -> bool:
        selected = self.selected_text
        if not selected:
            return False
        self.post_message(self.CopyRequested(self.pastes.expand(selected)))
        return True

    async def _on_paste(self, event: events.Paste) -> None:
        event.prevent_default()
        event.stop()
        if self.read_only:
            return
        text = clean_paste(event.text)
        if not text:
            return
        self._close_completion()
        self.history.checkpoint()
        marker = self.pastes.collapse(text)
        self._type(marker if marker is not None else text)
        self.history.checkpoint()

    # --- completion --------------------------------------------------------------------------

    def _before_cursor(self) -> str:
        row, col = self.cursor_location
        return self.document[row][:col]

    def _tab(self) -> bool:
        row, _ = self.cursor_location
        before = self._before_cursor()
        found = self.completer.suggest(row, before, force=True)
        if found is None:
            if self.completer.wants_files(before):
                self._load_files()
            return True
        if found.kind == "path":
            if len(found.items) == 1:
                self._apply(found, found.items[0])
                return True
            # Character-wise on purpose: ``ed`` over ``editor.py`` and ``edit.py`` gives ``edit``.
            common = os.path.commonprefix([item.value for item in found.items])  # noqa: RUF071
            typed = before[found.start :]
            if len(common) > len(typed):
                self._apply_text(found.start, common)
                found = self.completer.suggest(row, self._before_cursor(), force=True) or found
        self._show(found, forced=True)
        return True

    def _update_completion(self) -> None:
        """Recompute the choices after an edit: open on ``/`` and ``@`` contexts, follow the
        typing while open, close when nothing matches.
        """
        row, _ = self.cursor_location
        before = self._before_cursor()
        found = self.completer.suggest(row, before, force=self._forced)
        if found is None and self.completer.wants_files(before):
            self._load_files()
        if found is None:
            self._close_completion()
        else:
            self._show(found, forced=self._forced)

    def _load_files(self) -> None:
        if not self.completer.file_index.loaded:
            self.run_worker(
                self.completer.file_index.load,
                thread=True,
                group=_FILE_INDEX_GROUP,
                exclusive=True,
                exit_on_error=False,
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The file list is ready: show ``@`` choices if the cursor still asks for them."""
        if (
            event.worker.group == _FILE_INDEX_GROUP
            and event.state == WorkerState.SUCCESS
            and self.completer.wants_files(self._before_cursor())
        ):
            self._update_completion()

    def _show(self, found: Suggestions, *, forced: bool) -> None:
        previous = self.completion_items[self._selected] if self._completion else None
        self._completion = found
        self._forced = forced
        values = [item.value for item in found.items]
        kept = previous is not None and previous.value in values
        self._selected = values.index(previous.value) if previous is not None and kept else 0
        self._announce()

    def _close_completion(self) -> None:
        if self._completion is None:
            return
        self._completion = None
        self._forced = False
        self._selected = 0
        self._announce()

    def _announce(self) -> None:
        items = self.completion_items
        if self.menu is not None:
            self.menu.show(items, self._selected)
        self.post_message(self.CompletionChanged(items, self._selected))

    def _move_selection(self, delta: int) -> bool:
        count = len(self.completion_items)
        if count:
            if abs(delta) == 1:
                self._selected = (self._selected + delta) % count
            else:
                self._selected = min(max(0, self._selected + delta), count - 1)
            self._announce()
        return True

    def _accept(self, confirm: bool) -> bool:
        found = self._completion
        if found is None or not found.items:
            return True
        self._apply(found, found.items[self._selected])
        if confirm and found.kind == "command":
            return self._submit()  # Enter on a command runs it, as in the reference
        return True

    def _apply(self, found: Suggestions, item: CompletionItem) -> None:
        self._close_completion()
        self._apply_text(found.start, completion_insert(found.kind, item))
        if item.value.endswith("/") and found.kind in ("path", "file"):
            # Completed a directory: go on with its entries.
            self._forced = found.kind == "path"
            self._update_completion()

    def _apply_text(self, start: int, text: str) -> None:
        row, col = self.cursor_location
        self.history.checkpoint()
        self.replace(text, (row, start), (row, col), maintain_selection_offset=False)
        self.prompt_history.reset()
