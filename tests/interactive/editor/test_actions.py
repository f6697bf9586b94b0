"""Every ``tui.editor.*``/``tui.input.*`` action of the spec, pressed with each default key.

The cases are keyed by action id and compared with the action table, so an action added to the
spec without a test here fails ``test_every_editor_action_has_a_case``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from knightcode._keys.actions import ACTIONS, MAIN
from knightcode._keys.registry import KeyRegistry
from knightcode._keys.textual_keys import to_textual
from knightcode._modes.interactive.editor import PromptEditor
from tests.interactive.editor.harness import EditorApp, put

Case = Callable[[Pilot[None], EditorApp, str], Awaitable[None]]
CASES: dict[str, Case] = {}

# Actions without a default key are bound to this key for their test.
UNBOUND_TEST_KEY = "f7"


def case(action: str) -> Callable[[Case], Case]:
    def register(fn: Case) -> Case:
        CASES[action] = fn
        return fn

    return register


def _editor(app: EditorApp) -> PromptEditor:
    return app.editor


@case("tui.editor.cursorUp")
async def _up(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "first\nsecond", (1, 3))
    await pilot.press(key)
    assert app.editor.cursor_location == (0, 3)


@case("tui.editor.cursorDown")
async def _down(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "first\nsecond", (0, 2))
    await pilot.press(key)
    assert app.editor.cursor_location == (1, 2)


@case("tui.editor.historyPrevious")
async def _history_previous(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    app.editor.set_history(["older", "newer"])
    put(app.editor, "draft\nline", (1, 0))  # not on the first line: still browses
    await pilot.press(key)
    assert app.editor.text == "newer"
    await pilot.press(key)
    assert app.editor.text == "older"


@case("tui.editor.historyNext")
async def _history_next(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    app.editor.set_history(["older", "newer"])
    put(app.editor, "draft")
    app.editor.prompt_history.previous("draft")
    app.editor.prompt_history.previous("draft")
    await pilot.press(key)
    assert app.editor.text == "newer"
    await pilot.press(key)
    assert app.editor.text == "draft"


@case("tui.editor.cursorLeft")
async def _left(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "abc", (0, 2))
    await pilot.press(key)
    assert app.editor.cursor_location == (0, 1)


@case("tui.editor.cursorRight")
async def _right(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "abc", (0, 1))
    await pilot.press(key)
    assert app.editor.cursor_location == (0, 2)


@case("tui.editor.cursorWordLeft")
async def _word_left(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "foo.bar baz")
    await pilot.press(key)
    assert app.editor.cursor_location == (0, 8)
    await pilot.press(key)
    assert app.editor.cursor_location == (0, 4)
    await pilot.press(key)
    assert app.editor.cursor_location == (0, 3)


@case("tui.editor.cursorWordRight")
async def _word_right(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "foo.bar baz", (0, 0))
    await pilot.press(key)
    assert app.editor.cursor_location == (0, 3)
    await pilot.press(key)
    assert app.editor.cursor_location == (0, 4)
    await pilot.press(key)
    assert app.editor.cursor_location == (0, 7)


@case("tui.editor.cursorLineStart")
async def _line_start(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "one\ntwo three", (1, 5))
    await pilot.press(key)
    assert app.editor.cursor_location == (1, 0)


@case("tui.editor.cursorLineEnd")
async def _line_end(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "one two\nthree", (0, 1))
    await pilot.press(key)
    assert app.editor.cursor_location == (0, 7)


@case("tui.editor.jumpForward")
async def _jump_forward(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "a-b-c\nx-y", (0, 1))
    await pilot.press(key, "-")
    assert app.editor.cursor_location == (0, 3)
    await pilot.press(key, "y")
    assert app.editor.cursor_location == (1, 2)
    await pilot.press(key, "q")  # no such character: the cursor stays, nothing is typed
    assert app.editor.cursor_location == (1, 2)
    assert app.editor.text == "a-b-c\nx-y"


@case("tui.editor.jumpBackward")
async def _jump_backward(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "a-b\nc-d-e", (1, 3))
    await pilot.press(key, "-")
    assert app.editor.cursor_location == (1, 1)
    await pilot.press(key, "a")
    assert app.editor.cursor_location == (0, 0)
    await pilot.press(key, key)  # pressing the jump key again cancels
    await pilot.press("z")
    assert app.editor.text == "za-b\nc-d-e"


@case("tui.editor.pageUp")
async def _page_up(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "\n".join(f"line {n}" for n in range(60)))
    await pilot.pause()
    await pilot.press(key)
    row = app.editor.cursor_location[0]
    assert 0 <= row < 59


@case("tui.editor.pageDown")
async def _page_down(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "\n".join(f"line {n}" for n in range(60)), (0, 0))
    await pilot.pause()
    await pilot.press(key)
    assert app.editor.cursor_location[0] > 0


@case("tui.editor.deleteCharBackward")
async def _backspace(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "abc", (0, 2))
    await pilot.press(key)
    assert (app.editor.text, app.editor.cursor_location) == ("ac", (0, 1))


@case("tui.editor.deleteCharForward")
async def _delete(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "abc", (0, 1))
    await pilot.press(key)
    assert (app.editor.text, app.editor.cursor_location) == ("ac", (0, 1))
    assert not app.bubbled


@case("tui.editor.deleteWordBackward")
async def _kill_word_back(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "say hello world")
    await pilot.press(key)
    assert app.editor.text == "say hello "
    assert app.editor.kill_ring.peek() == "world"


@case("tui.editor.deleteWordForward")
async def _kill_word_forward(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "say hello world", (0, 3))
    await pilot.press(key)
    assert app.editor.text == "say world"
    assert app.editor.kill_ring.peek() == " hello"


@case("tui.editor.deleteToLineStart")
async def _kill_line_start(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "keep\nabc def", (1, 4))
    await pilot.press(key)
    assert app.editor.text == "keep\ndef"
    assert app.editor.kill_ring.peek() == "abc "


@case("tui.editor.deleteToLineEnd")
async def _kill_line_end(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "abc def\nkeep", (0, 3))
    await pilot.press(key)
    assert app.editor.text == "abc\nkeep"
    assert app.editor.kill_ring.peek() == " def"


@case("tui.editor.yank")
async def _yank(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "x ")
    app.editor.kill_ring.push("killed", prepend=False, accumulate=False)
    await pilot.press(key)
    assert app.editor.text == "x killed"


@case("tui.editor.yankPop")
async def _yank_pop(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "")
    for text in ("one", "two", "three"):
        app.editor.kill_ring.push(text, prepend=False, accumulate=False)
    yank = to_textual(app.registry.keys_for("tui.editor.yank")[0])
    await pilot.press(yank)
    assert app.editor.text == "three"
    await pilot.press(key)
    assert app.editor.text == "two"
    await pilot.press(key)
    assert app.editor.text == "one"
    await pilot.press("x", key)  # not right after a yank: does nothing
    assert app.editor.text == "onex"


@case("tui.editor.undo")
async def _undo(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "")
    await pilot.press(*"abc")
    app.editor.history.checkpoint()
    await pilot.press("ctrl+w")
    assert app.editor.text == ""
    await pilot.press(key)
    assert app.editor.text == "abc"
    await pilot.press(key)
    assert app.editor.text == ""


@case("tui.input.newLine")
async def _new_line(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "ab", (0, 1))
    await pilot.press(key)
    assert (app.editor.text, app.editor.cursor_location) == ("a\nb", (1, 0))
    assert app.submitted == []


@case("tui.input.submit")
async def _submit(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "line one\nline two")
    await pilot.press(key)
    assert app.submitted == ["line one\nline two"]
    assert app.editor.text == ""
    await pilot.press(key)  # nothing to submit: nothing posted
    assert app.submitted == ["line one\nline two"]


@case("tui.input.tab")
async def _tab(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    (Path.cwd() / "unique-name.txt").write_text("x")
    put(app.editor, "read uniq")
    await pilot.press(key)
    assert app.editor.text == "read unique-name.txt"


@case("tui.input.copy")
async def _copy(pilot: Pilot[None], app: EditorApp, key: str) -> None:
    put(app.editor, "copy me please")
    app.editor.select_line(0)
    await pilot.press(key)
    assert app.copied == ["copy me please"]
    assert app.bubbled == []


EDITOR_ACTIONS = sorted(
    a.id for a in ACTIONS if a.id.startswith(("tui.editor.", "tui.input.")) and MAIN in a.contexts
)


def test_every_editor_action_has_a_case() -> None:
    assert sorted(CASES) == EDITOR_ACTIONS


def _action_keys() -> list[tuple[str, str]]:
    registry = KeyRegistry(None, platform="posix")
    pairs: list[tuple[str, str]] = []
    for action in EDITOR_ACTIONS:
        keys = registry.keys_for(action) or (UNBOUND_TEST_KEY,)
        pairs.extend((action, key) for key in keys)
    return pairs


@pytest.mark.parametrize(("action", "key"), _action_keys())
async def test_action_with_default_key(action: str, key: str, agent_dir: Path) -> None:
    registry = KeyRegistry(agent_dir, platform="posix")
    if not registry.keys_for(action):
        (agent_dir / "keybindings.json").write_text(f'{{"{action}": "{key}"}}')
        registry.reload()
    app = EditorApp(registry)
    async with app.run_test() as pilot:
        await CASES[action](pilot, app, to_textual(key))
