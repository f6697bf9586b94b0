"""Which keys the editor takes and which reach the app; the registry, not Textual, decides."""

from __future__ import annotations

import json
from pathlib import Path

from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.editor import PromptEditor
from tests.interactive.editor.harness import EditorApp, put


async def test_app_keys_bubble_to_the_app() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        # app.clear, app.exit (empty editor), app.interrupt, app.editor.external,
        # app.model.select, app.thinking.cycle, app.suspend, app.tools.expand
        keys = ["ctrl+c", "ctrl+d", "escape", "ctrl+g", "ctrl+l", "shift+tab", "ctrl+z", "ctrl+o"]
        await pilot.press(*keys)
        assert app.bubbled == keys
        assert app.editor.text == ""


async def test_ctrl_d_deletes_when_there_is_text_and_exits_when_empty() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        put(app.editor, "ab", (0, 0))
        await pilot.press("ctrl+d")
        assert app.editor.text == "b" and app.bubbled == []
        await pilot.press("ctrl+d")
        assert app.editor.text == "" and app.bubbled == []
        await pilot.press("ctrl+d")
        assert app.bubbled == ["ctrl+d"]


async def test_ctrl_c_without_a_selection_reaches_the_app_with_the_text_intact() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        await pilot.press(*"draft")
        await pilot.press("ctrl+c")
        assert app.bubbled == ["ctrl+c"] and app.copied == []
        assert app.editor.text == "draft"


async def test_printable_keys_are_typed_and_textarea_defaults_do_not_fire() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        await pilot.press(*"hi there", "space", "!")
        assert app.editor.text == "hi there !"
        # TextArea's own meanings: ctrl+z undo, ctrl+a select all, ctrl+k delete line.
        await pilot.press("ctrl+z")
        assert app.editor.text == "hi there !"
        await pilot.press("left", "left", "ctrl+k")
        assert app.editor.text == "hi there"
        await pilot.press("ctrl+a")
        assert app.editor.selected_text == "" and app.editor.cursor_location == (0, 0)
        assert app.bubbled == ["ctrl+z"]


async def test_a_rebinding_in_keybindings_json_changes_what_a_key_does(agent_dir: Path) -> None:
    registry = KeyRegistry(agent_dir, platform="posix")
    app = EditorApp(registry)
    async with app.run_test() as pilot:
        put(app.editor, "abc def", (0, 3))
        await pilot.press("ctrl+k")
        assert app.editor.text == "abc"
        put(app.editor, "abc def", (0, 3))
        (agent_dir / "keybindings.json").write_text(
            json.dumps({"tui.editor.deleteToLineEnd": "alt+k", "tui.input.submit": "ctrl+s"})
        )
        registry.reload()
        app.editor.reload_keys()
        await pilot.press("ctrl+k")  # now unbound in the editor: bubbles, text untouched
        assert app.editor.text == "abc def" and app.bubbled == ["ctrl+k"]
        await pilot.press("alt+k")
        assert app.editor.text == "abc"
        await pilot.press("enter")  # no longer submit; unbound and not printable: bubbles
        assert app.submitted == [] and app.editor.text == "abc"
        await pilot.press("ctrl+s")
        assert app.submitted == ["abc"]


async def test_a_disabled_editor_action_lets_its_key_reach_the_app(agent_dir: Path) -> None:
    (agent_dir / "keybindings.json").write_text('{"tui.editor.cursorLineStart": []}')
    app = EditorApp(KeyRegistry(agent_dir, platform="posix"))
    async with app.run_test() as pilot:
        put(app.editor, "abc")
        await pilot.press("home", "ctrl+a")
        assert app.editor.cursor_location == (0, 3)
        assert app.bubbled == ["home", "ctrl+a"]


async def test_backslash_enter_is_a_newline() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        await pilot.press("a", "backslash", "enter", "b")
        assert app.editor.text == "a\nb" and app.submitted == []
        await pilot.press("enter")
        assert app.submitted == ["a\nb"]


async def test_submit_reports_shell_prefixes_for_the_app_to_run() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        for text in ("!ls -la", "!! git status", "! ", "plain"):
            put(app.editor, text)
            await pilot.press("enter")
    assert app.submitted == ["!ls -la", "!! git status", "!", "plain"]
    commands = [PromptEditor.Submitted(text).shell_command for text in app.submitted]
    assert commands == [("ls -la", True), ("git status", False), None, None]
