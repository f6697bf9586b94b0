"""Every action of ``spec/keybindings.md``: id, default keys per platform, description, context.

The table is data, written as in the spec (``shift+ctrl+p`` stays ``shift+ctrl+p``) so that
``tests/keys/test_actions.py`` can compare it cell by cell with the spec's markdown; the registry
canonicalises keys when it builds its look-ups.

*Section* is the spec heading an action is listed under (for ``/hotkeys`` and the drift test);
*contexts* are the screens where its keys are listened for.  Two actions conflict only when they
share a context: ``app.exit`` and ``app.session.delete`` can both be ``ctrl+d`` because one acts in
the main screen and the other in the session picker.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ACTIONS",
    "ACTIONS_BY_ID",
    "Action",
    "Platform",
    "current_platform",
]

Platform = Literal["posix", "windows", "wsl"]
"""Where the defaults differ: native Windows, WSL, and everything else (Linux, macOS, BSD).
The spec has no macOS-specific default."""

MAIN = "main"
"""The main screen: the editor and the application actions, active together."""
SELECT = "select"
ALT_SCREEN = "altScreen"
ALT_SEARCH = "altScreen.search"
SESSION_PICKER = "sessionPicker"
MODEL_SELECTOR = "modelSelector"
THINKING_SELECTOR = "thinkingSelector"
TREE = "tree"
SCOPED_MODELS = "scopedModels"


@dataclass(frozen=True)
class Action:
    """One bindable action.

    :param id: the namespaced id used in ``keybindings.json``
    :param keys: default keys on Linux and macOS
    :param description: the spec's description, shown by ``/hotkeys``
    :param section: the spec heading the action is listed under
    :param contexts: the screens where the action's keys are active
    :param windows: default keys on native Windows when they differ (``()`` = no default)
    :param wsl: default keys under WSL when they differ
    """

    id: str
    keys: tuple[str, ...]
    description: str
    section: str
    contexts: tuple[str, ...]
    windows: tuple[str, ...] | None = None
    wsl: tuple[str, ...] | None = None

    def defaults(self, platform: Platform) -> tuple[str, ...]:
        """The default keys on ``platform``."""
        if platform == "windows" and self.windows is not None:
            return self.windows
        if platform == "wsl" and self.wsl is not None:
            return self.wsl
        return self.keys


def current_platform() -> Platform:
    """The platform this process runs on, for choosing defaults.

    WSL is a Linux kernel whose ``/proc/version`` names Microsoft; its terminals (Windows
    Terminal) swallow the same keys as native Windows ones, hence the separate defaults.
    """
    if sys.platform == "win32":
        return "windows"
    if sys.platform.startswith("linux"):
        if os.environ.get("WSL_DISTRO_NAME"):
            return "wsl"
        try:
            with open("/proc/version", encoding="utf-8", errors="replace") as fh:
                if "microsoft" in fh.read(4096).lower():
                    return "wsl"
        except OSError:
            pass
    return "posix"


def _a(
    id: str,
    keys: str,
    description: str,
    section: str,
    contexts: tuple[str, ...],
    *,
    windows: str | None = None,
    wsl: str | None = None,
) -> Action:
    """Shorthand for the table: keys as a comma-separated string, ``""`` for none."""

    def split(text: str) -> tuple[str, ...]:
        return tuple(part.strip() for part in text.split(",") if part.strip())

    return Action(
        id,
        split(keys),
        description,
        section,
        contexts,
        None if windows is None else split(windows),
        None if wsl is None else split(wsl),
    )


_CUR = "Cursor movement"
_EDIT = "Text editing"
_INPUT = "Input and selection"
_FULL = "Fullscreen"
_APP = "Application"
_SESS = "Sessions"
_MODELS = "Models and Thinking"
_DISPLAY = "Display and Message Queue"
_TREE = "Tree Navigation"
_SCOPED = "Scoped Models Selector"
_M = (MAIN,)

ACTIONS: tuple[Action, ...] = (
    # Terminal UI: cursor movement
    _a("tui.editor.cursorUp", "up", "Move cursor up, browsing older history at the top", _CUR, _M),
    _a(
        "tui.editor.cursorDown",
        "down",
        "Move cursor down, browsing newer history at the bottom",
        _CUR,
        _M,
    ),
    _a("tui.editor.historyPrevious", "", "Select the previous prompt history entry", _CUR, _M),
    _a("tui.editor.historyNext", "", "Select the next prompt history entry", _CUR, _M),
    _a("tui.editor.cursorLeft", "left, ctrl+b", "Move cursor left", _CUR, _M),
    _a("tui.editor.cursorRight", "right, ctrl+f", "Move cursor right", _CUR, _M),
    _a(
        "tui.editor.cursorWordLeft", "alt+left, ctrl+left, alt+b", "Move cursor word left", _CUR, _M
    ),
    _a(
        "tui.editor.cursorWordRight",
        "alt+right, ctrl+right, alt+f",
        "Move cursor word right",
        _CUR,
        _M,
    ),
    _a("tui.editor.cursorLineStart", "home, ctrl+a", "Move to line start", _CUR, _M),
    _a("tui.editor.cursorLineEnd", "end, ctrl+e", "Move to line end", _CUR, _M),
    _a("tui.editor.jumpForward", "ctrl+]", "Jump forward to character", _CUR, _M),
    _a("tui.editor.jumpBackward", "ctrl+alt+]", "Jump backward to character", _CUR, _M),
    _a("tui.editor.pageUp", "pageUp, ctrl+pageUp", "Scroll up by page", _CUR, _M),
    _a("tui.editor.pageDown", "pageDown, ctrl+pageDown", "Scroll down by page", _CUR, _M),
    # Terminal UI: text editing
    _a("tui.editor.deleteCharBackward", "backspace", "Delete character backward", _EDIT, _M),
    _a("tui.editor.deleteCharForward", "delete, ctrl+d", "Delete character forward", _EDIT, _M),
    _a(
        "tui.editor.deleteWordBackward",
        "ctrl+w, alt+backspace",
        "Delete word backward",
        _EDIT,
        _M,
    ),
    _a("tui.editor.deleteWordForward", "alt+d, alt+delete", "Delete word forward", _EDIT, _M),
    _a("tui.editor.deleteToLineStart", "ctrl+u", "Delete to line start", _EDIT, _M),
    _a("tui.editor.deleteToLineEnd", "ctrl+k", "Delete to line end", _EDIT, _M),
    _a("tui.editor.yank", "ctrl+y", "Paste most recently deleted text", _EDIT, _M),
    _a("tui.editor.yankPop", "alt+y", "Cycle through deleted text after yank", _EDIT, _M),
    _a("tui.editor.undo", "ctrl+-", "Undo last edit", _EDIT, _M, windows="ctrl+z", wsl="alt+z"),
    # Terminal UI: input and selection
    _a("tui.input.newLine", "shift+enter, ctrl+j", "Insert new line", _INPUT, _M),
    _a("tui.input.submit", "enter", "Submit input", _INPUT, _M),
    _a("tui.input.tab", "tab", "Tab or autocomplete", _INPUT, _M),
    _a("tui.input.copy", "ctrl+c", "Copy selection", _INPUT, _M),
    _a("tui.select.up", "up", "Move selection up", _INPUT, (SELECT,)),
    _a("tui.select.down", "down", "Move selection down", _INPUT, (SELECT,)),
    _a("tui.select.pageUp", "pageUp", "Page up in list", _INPUT, (SELECT,)),
    _a("tui.select.pageDown", "pageDown", "Page down in list", _INPUT, (SELECT,)),
    _a(
        "tui.select.left",
        "left",
        "Previous page of a selector, such as the previous question",
        _INPUT,
        (SELECT,),
    ),
    _a(
        "tui.select.right",
        "right",
        "Next page of a selector, such as the next question",
        _INPUT,
        (SELECT,),
    ),
    _a("tui.select.confirm", "enter", "Confirm selection", _INPUT, (SELECT,)),
    _a("tui.select.cancel", "escape, ctrl+c", "Cancel selection", _INPUT, (SELECT,)),
    # Terminal UI: fullscreen
    _a(
        "tui.altScreen.pageUp",
        "pageUp",
        "Scroll the transcript up by one page",
        _FULL,
        (ALT_SCREEN,),
    ),
    _a(
        "tui.altScreen.pageDown",
        "pageDown",
        "Scroll the transcript down by one page",
        _FULL,
        (ALT_SCREEN,),
    ),
    _a(
        "tui.altScreen.halfPageUp",
        "",
        "Scroll the transcript up by half a page",
        _FULL,
        (ALT_SCREEN,),
    ),
    _a(
        "tui.altScreen.halfPageDown",
        "",
        "Scroll the transcript down by half a page",
        _FULL,
        (ALT_SCREEN,),
    ),
    _a("tui.altScreen.lineUp", "", "Scroll the transcript up by one line", _FULL, (ALT_SCREEN,)),
    _a(
        "tui.altScreen.lineDown",
        "",
        "Scroll the transcript down by one line",
        _FULL,
        (ALT_SCREEN,),
    ),
    _a(
        "tui.altScreen.previousPrompt",
        "ctrl+shift+up, ctrl+up",
        "Jump to the previous marked message",
        _FULL,
        (ALT_SCREEN,),
        windows="ctrl+up",
        wsl="ctrl+up",
    ),
    _a(
        "tui.altScreen.nextPrompt",
        "ctrl+shift+down, ctrl+down",
        "Jump to the next marked message",
        _FULL,
        (ALT_SCREEN,),
        windows="ctrl+down",
        wsl="ctrl+down",
    ),
    _a(
        "tui.altScreen.search",
        "ctrl+shift+f",
        "Search the rendered transcript",
        _FULL,
        (ALT_SCREEN,),
        windows="ctrl+f",
        wsl="ctrl+f",
    ),
    _a(
        "tui.altScreen.searchNext",
        "enter, ctrl+g",
        "Select the next search match while searching",
        _FULL,
        (ALT_SEARCH,),
    ),
    _a(
        "tui.altScreen.searchPrevious",
        "shift+enter, ctrl+shift+g",
        "Select the previous search match while searching",
        _FULL,
        (ALT_SEARCH,),
    ),
    _a("tui.altScreen.searchClose", "escape", "Close transcript search", _FULL, (ALT_SEARCH,)),
    _a(
        "tui.altScreen.top",
        "ctrl+home",
        "Scroll to the beginning of the transcript",
        _FULL,
        (ALT_SCREEN,),
    ),
    _a(
        "tui.altScreen.bottom",
        "ctrl+end",
        "Scroll to the transcript end and follow new output",
        _FULL,
        (ALT_SCREEN,),
    ),
    # Application
    _a("app.interrupt", "escape", "Cancel / abort", _APP, _M),
    _a("app.clear", "ctrl+c", "Clear editor (first) / exit (second)", _APP, _M),
    _a("app.exit", "ctrl+d", "Exit (when editor empty)", _APP, _M),
    _a("app.suspend", "ctrl+z", "Suspend to background", _APP, _M, windows=""),
    _a(
        "app.editor.external",
        "ctrl+g",
        "Open in external editor (`externalEditor`, `$VISUAL`, `$EDITOR`, Notepad on Windows,"
        " or `nano` elsewhere)",
        _APP,
        _M,
    ),
    _a(
        "app.clipboard.pasteImage",
        "ctrl+v",
        "Paste files on macOS, images, or text from clipboard",
        _APP,
        _M,
        windows="alt+v",
        wsl="alt+v",
    ),
    # Sessions
    _a("app.session.new", "", "Start a new session (`/new`)", _SESS, _M),
    _a("app.session.tree", "", "Open session tree navigator (`/tree`)", _SESS, _M),
    _a("app.session.fork", "", "Fork current session (`/fork`)", _SESS, _M),
    _a("app.session.resume", "", "Open session resume picker (`/resume`)", _SESS, _M),
    _a("app.session.togglePath", "ctrl+p", "Toggle path display", _SESS, (SESSION_PICKER,)),
    _a("app.session.toggleSort", "ctrl+s", "Toggle sort mode", _SESS, (SESSION_PICKER,)),
    _a(
        "app.session.toggleNamedFilter",
        "ctrl+n",
        "Toggle named-only filter",
        _SESS,
        (SESSION_PICKER,),
    ),
    _a("app.session.rename", "ctrl+r", "Rename session", _SESS, (SESSION_PICKER,)),
    _a("app.session.delete", "ctrl+d", "Delete session", _SESS, (SESSION_PICKER,)),
    _a(
        "app.session.deleteNoninvasive",
        "ctrl+backspace",
        "Delete session when query is empty",
        _SESS,
        (SESSION_PICKER,),
    ),
    # Models and thinking
    _a("app.model.select", "ctrl+l", "Open model selector", _MODELS, _M),
    _a("app.model.cycleForward", "ctrl+p", "Cycle to next model", _MODELS, _M),
    _a(
        "app.model.cycleBackward",
        "shift+ctrl+p",
        "Cycle to previous model",
        _MODELS,
        _M,
        windows="alt+p",
        wsl="alt+p",
    ),
    _a(
        "app.models.save",
        "ctrl+s, ctrl+d",
        "Save the selected default model or scoped model configuration to settings (`ctrl+d`"
        " because many terminals swallow `ctrl+s`)",
        _MODELS,
        (MODEL_SELECTOR, SCOPED_MODELS),
    ),
    _a("app.thinking.cycle", "shift+tab", "Cycle thinking level", _MODELS, _M),
    _a(
        "app.thinking.save",
        "ctrl+s, ctrl+d",
        "Save current thinking level to settings (`ctrl+d` because many terminals swallow"
        " `ctrl+s`)",
        _MODELS,
        (THINKING_SELECTOR,),
    ),
    _a("app.thinking.toggle", "ctrl+t", "Collapse or expand thinking blocks", _MODELS, _M),
    # Display and message queue
    _a("app.tools.expand", "ctrl+o", "Collapse or expand tool output", _DISPLAY, _M),
    _a(
        "app.message.copy",
        "ctrl+x",
        "Copy the selected message in `/tree`; otherwise copy the active fullscreen text"
        " selection when `fullscreenCopyOnSelect` is disabled, falling back to the last assistant"
        " message. On OAuth sign-in screens, copy the sign-in URL",
        _DISPLAY,
        (MAIN, TREE, ALT_SCREEN),
    ),
    _a(
        "app.message.followUp",
        "alt+enter",
        "Queue follow-up message",
        _DISPLAY,
        _M,
        windows="ctrl+q",
        wsl="ctrl+q",
    ),
    _a(
        "app.message.dequeue",
        "alt+up",
        "Restore queued messages to editor",
        _DISPLAY,
        _M,
        windows="alt+q",
        wsl="alt+q",
    ),
    # Tree navigation
    _a(
        "app.tree.foldOrUp",
        "ctrl+left, alt+left",
        "Fold current branch segment, or jump to the previous segment start",
        _TREE,
        (TREE,),
    ),
    _a(
        "app.tree.unfoldOrDown",
        "ctrl+right, alt+right",
        "Unfold current branch segment, or jump to the next segment start or branch end",
        _TREE,
        (TREE,),
    ),
    _a(
        "app.tree.editLabel",
        "shift+l",
        "Edit the label on the selected tree node",
        _TREE,
        (TREE,),
    ),
    _a(
        "app.tree.toggleLabelTimestamp",
        "shift+t",
        "Toggle label timestamps in the tree",
        _TREE,
        (TREE,),
    ),
    _a("app.tree.filter.default", "ctrl+d", "Set tree filter to default view", _TREE, (TREE,)),
    _a(
        "app.tree.filter.noTools",
        "ctrl+t",
        "Toggle tree filter that hides tool results",
        _TREE,
        (TREE,),
    ),
    _a(
        "app.tree.filter.userOnly",
        "ctrl+u",
        "Toggle tree filter that shows only user messages",
        _TREE,
        (TREE,),
    ),
    _a(
        "app.tree.filter.labeledOnly",
        "ctrl+l",
        "Toggle tree filter that shows only labeled entries",
        _TREE,
        (TREE,),
    ),
    _a(
        "app.tree.filter.all",
        "ctrl+a",
        "Toggle tree filter that shows all entries",
        _TREE,
        (TREE,),
    ),
    _a("app.tree.filter.cycleForward", "ctrl+o", "Cycle tree filter forward", _TREE, (TREE,)),
    _a(
        "app.tree.filter.cycleBackward",
        "shift+ctrl+o",
        "Cycle tree filter backward",
        _TREE,
        (TREE,),
    ),
    # Scoped models selector
    _a(
        "app.models.enableAll",
        "ctrl+a",
        "Enable all models (or all matching the current search)",
        _SCOPED,
        (SCOPED_MODELS,),
    ),
    _a(
        "app.models.clearAll",
        "ctrl+x",
        "Clear all models (or all matching the current search)",
        _SCOPED,
        (SCOPED_MODELS,),
    ),
    _a(
        "app.models.toggleProvider",
        "ctrl+p",
        "Toggle all models for the current provider",
        _SCOPED,
        (SCOPED_MODELS,),
    ),
    _a(
        "app.models.reorderUp",
        "alt+up",
        "Move the selected model up in the cycle order",
        _SCOPED,
        (SCOPED_MODELS,),
    ),
    _a(
        "app.models.reorderDown",
        "alt+down",
        "Move the selected model down in the cycle order",
        _SCOPED,
        (SCOPED_MODELS,),
    ),
)
"""Every action, in the spec's order."""

ACTIONS_BY_ID: dict[str, Action] = {action.id: action for action in ACTIONS}
