"""Bracketed paste (large pastes collapsed), the external editor, the thinking-level border."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from textual import events

from knightcode._modes.interactive.editor import PromptEditor
from tests.interactive.editor.harness import EditorApp, put

BIG = "\n".join(f"log line {n}" for n in range(30))


async def test_a_large_paste_is_a_marker_and_is_sent_whole() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        await pilot.press(*"see ")
        app.post_message(events.Paste(BIG))
        await pilot.pause()
        assert app.editor.text == "see [paste #1 +30 lines]"
        app.post_message(events.Paste("x" * 1500))
        await pilot.pause()
        assert app.editor.text.endswith("[paste #2 1500 chars]")
        await pilot.press("enter")
        assert app.submitted == ["see " + BIG + "x" * 1500]


async def test_a_small_paste_is_inserted_as_is() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        app.post_message(events.Paste("one\r\ntwo\tthree\x1b[31m"))
        await pilot.pause()
        assert app.editor.text == "one\ntwo    three[31m"


async def test_deleting_the_marker_deletes_the_paste() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        await pilot.press("a")
        app.post_message(events.Paste(BIG))
        await pilot.pause()
        await pilot.press("b", "left", "backspace")  # one key takes the whole marker
        assert app.editor.text == "ab"
        app.post_message(events.Paste(BIG))
        await pilot.pause()
        put(app.editor, app.editor.text, (0, 1))
        await pilot.press("delete")
        assert app.editor.text == "ab"
        await pilot.press("enter")
        assert app.submitted == ["ab"]


@pytest.fixture
def fake_editor(tmp_path: Path) -> Path:
    """A real editor script: records the file's mode, appends a line, exits with $FAKE_STATUS."""
    script = tmp_path / "fake-editor.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'stat -c %a "$1" > {tmp_path}/mode\n'
        'printf "%s\\n" "$(cat "$1") edited" > "$1"\n'
        'exit "${FAKE_STATUS:-0}"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


async def test_external_editor_rewrites_the_prompt(
    fake_editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(fake_editor))
    app = EditorApp()
    async with app.run_test() as pilot:
        await pilot.press(*"draft ")
        app.post_message(events.Paste(BIG))
        await pilot.pause()
        assert app.editor.edit_externally() is True
        # The paste was expanded for editing; the editor's trailing newline is dropped.
        assert app.editor.text == f"draft {BIG} edited"
        assert (fake_editor.parent / "mode").read_text().strip() == "600"
        await pilot.press("ctrl+minus")  # the replacement is undoable
        assert app.editor.text == "draft [paste #1 +30 lines]"


async def test_the_setting_comes_before_visual_and_editor(
    fake_editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VISUAL", "/nonexistent/visual")
    monkeypatch.setenv("EDITOR", "/nonexistent/editor")
    app = EditorApp()
    async with app.run_test():
        put(app.editor, "x")
        assert app.editor.edit_externally(f"{fake_editor} ") is True
        assert app.editor.text == "x edited"


async def test_a_failing_editor_leaves_the_text_with_a_notice(
    fake_editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_STATUS", "3")
    monkeypatch.setenv("VISUAL", str(fake_editor))
    app = EditorApp()
    async with app.run_test() as pilot:
        put(app.editor, "keep me")
        assert app.editor.edit_externally() is False
        assert app.editor.text == "keep me"
        monkeypatch.setenv("VISUAL", "/nonexistent/editor --wait")
        assert app.editor.edit_externally() is False
        await pilot.pause()
        notices = [n.message for n in app._notifications]
        assert any("status 3" in m for m in notices)
        assert any("/nonexistent/editor" in m for m in notices)
    assert not [
        p for p in os.listdir(os.environ.get("TMPDIR", "/tmp")) if "knightcode-prompt-" in p
    ]


async def test_border_level_sets_one_thinking_class_and_colour() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        editor: PromptEditor = app.editor
        editor.border_level("high")
        await pilot.pause()
        high = editor.styles.border_top[1]
        editor.border_level("off")
        await pilot.pause()
        assert [c for c in editor.classes if c.startswith("-thinking-")] == ["-thinking-off"]
        assert editor.styles.border_top[1] != high
