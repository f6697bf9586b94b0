"""Prompt history (draft kept) and the kill ring (accumulating kills, yank, yank-pop)."""

from __future__ import annotations

from knightcode._modes.interactive.history import PromptHistory
from knightcode._modes.interactive.kill_ring import KillRing
from tests.interactive.editor.harness import EditorApp, put


def test_history_walks_back_and_returns_the_draft() -> None:
    history = PromptHistory(["one", "", "two", "two", "three"])
    assert history.entries == ("one", "two", "three")
    assert history.next() is None
    assert history.previous("my draft") == "three"
    assert history.previous("ignored") == "two"
    assert history.previous("ignored") == "one"
    assert history.previous("ignored") is None
    assert history.next() == "two"
    assert history.next() == "three"
    assert history.next() == "my draft"
    assert not history.browsing
    history.add("  four ")
    assert history.entries[-1] == "four"


def test_kill_ring_accumulates_and_rotates() -> None:
    ring = KillRing()
    assert ring.peek() is None
    ring.push("world", prepend=True, accumulate=False)
    ring.push("hello ", prepend=True, accumulate=True)
    assert ring.peek() == "hello world" and len(ring) == 1
    ring.push(" tail", prepend=False, accumulate=True)
    assert ring.peek() == "hello world tail"
    ring.push("other", prepend=False, accumulate=False)
    ring.push("last", prepend=False, accumulate=False)
    ring.rotate()
    assert ring.peek() == "other"
    ring.rotate()
    assert ring.peek() == "hello world tail"
    ring.rotate()
    assert ring.peek() == "last"


async def test_up_and_down_browse_history_keeping_the_draft() -> None:
    app = EditorApp(history=["first prompt", "second\nprompt"])
    async with app.run_test() as pilot:
        await pilot.press(*"draft")
        await pilot.press("up")  # first press: to the start of the draft
        assert app.editor.text == "draft" and app.editor.cursor_location == (0, 0)
        await pilot.press("up")
        assert app.editor.text == "second\nprompt"
        await pilot.press("up")  # multi-line entry: move within it first
        assert app.editor.text == "second\nprompt" and app.editor.cursor_location[0] == 0
        await pilot.press("up")
        assert app.editor.text == "first prompt"
        await pilot.press("up")  # the oldest: stays
        assert app.editor.text == "first prompt"
        await pilot.press("down")
        assert app.editor.text == "second\nprompt"
        await pilot.press("down", "down")
        assert app.editor.text == "draft"
        await pilot.press("down")
        assert app.editor.text == "draft" and app.editor.cursor_location == (0, 5)


async def test_submitted_prompts_join_the_history_and_editing_ends_browsing() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        await pilot.press(*"alpha", "enter", *"beta", "enter")
        await pilot.press("up")
        assert app.editor.text == "beta"
        await pilot.press("x")  # edited: no longer browsing, down does not go back
        await pilot.press("down")
        assert app.editor.text == "betax"
        assert app.editor.prompt_history.entries == ("alpha", "beta")


async def test_consecutive_kills_yank_back_as_one_and_yank_pop_cycles() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        put(app.editor, "one two three")
        await pilot.press("ctrl+w", "ctrl+w")  # two kills in a row: one entry
        assert app.editor.text == "one "
        assert app.editor.kill_ring.peek() == "two three"
        await pilot.press("ctrl+a", "ctrl+k")  # a separate kill after a move
        assert app.editor.text == ""
        assert len(app.editor.kill_ring) == 2
        await pilot.press("ctrl+y")
        assert app.editor.text == "one "
        await pilot.press("alt+y")
        assert app.editor.text == "two three"
        await pilot.press("alt+y")
        assert app.editor.text == "one "
        # Undo walks back one step at a time: each yank-pop, the yank, the kill.
        for expected in ("two three", "one ", "", "one "):
            await pilot.press("ctrl+minus")
            assert app.editor.text == expected


async def test_kill_at_line_edges_takes_the_newline() -> None:
    app = EditorApp()
    async with app.run_test() as pilot:
        put(app.editor, "ab\ncd", (0, 2))
        await pilot.press("ctrl+k")
        assert app.editor.text == "abcd"
        assert app.editor.kill_ring.peek() == "\n"
        put(app.editor, "ab\ncd", (1, 0))
        await pilot.press("ctrl+u")
        assert app.editor.text == "abcd"
