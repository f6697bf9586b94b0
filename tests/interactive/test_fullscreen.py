"""Fullscreen mode end to end: the real executable in tmux, in the alternate screen.

The session holds numbered exchanges (``question n`` / ``answer n line k``,
:mod:`tests.interactive.conversation`), so each assertion names exactly which lines are visible.
"""

from __future__ import annotations

import re

from knightcode.testing import TmuxSession
from tests.agent.conftest import Scripted
from tests.interactive.conftest import READY, Launch, requires_tmux
from tests.interactive.conversation import write_conversation

pytestmark = requires_tmux


def _open(scripted: Scripted, launch: Launch, exchanges: int, *args: str) -> TmuxSession:
    """Start fullscreen on a session of ``exchanges`` exchanges; returns once the screen is
    still (the footer's totals arrive a moment after the first frame).
    """
    path = write_conversation(scripted.project / "long.jsonl", scripted.project, exchanges)
    ui = launch("--fullscreen", "--session", str(path), *args)
    ui.wait_for(f"answer {exchanges - 1:04d} line 2")
    _settled(ui)
    return ui


def _settled(ui: TmuxSession) -> str:
    import time

    screen = ui.capture()
    while True:
        time.sleep(0.15)
        now = ui.capture()
        if now == screen:
            return now
        screen = now


def _questions(screen: str | list[str]) -> list[int]:
    text = screen if isinstance(screen, str) else "\n".join(screen)
    return [int(n) for n in re.findall(r"question (\d{4})", text)]


def _answers(screen: str | list[str]) -> list[int]:
    text = screen if isinstance(screen, str) else "\n".join(screen)
    return [int(n) for n in re.findall(r"answer (\d{4}) line", text)]


def test_fullscreen_opens_at_the_end_of_the_whole_session(
    scripted: Scripted, launch: Launch
) -> None:
    ui = _open(scripted, launch, 300)
    ui.wait_for("answer 0299 line 2")
    print(ui.capture())
    assert "earlier messages are not shown" not in ui.capture()  # all of it is there


def _pane(ui: TmuxSession) -> list[str]:
    """The transcript's rows: the screen above the editor's top border."""
    lines = ui.capture().split("\n")
    border = next(n for n, line in enumerate(lines) if line.startswith("─────"))
    return lines[:border]


def _after(ui: TmuxSession, keys: str, before: list[str]) -> list[str]:
    """Press ``keys`` and return the pane once it changed."""
    ui.send_keys(keys)
    import time

    deadline = time.monotonic() + 5
    while (now := _pane(ui)) == before:
        if time.monotonic() > deadline:
            raise AssertionError(f"{keys} did not move the transcript:\n" + "\n".join(now))
        time.sleep(0.02)
    time.sleep(0.05)  # the frame is complete
    return _pane(ui)


KEYS = {
    "tui.altScreen.halfPageUp": "alt+u",
    "tui.altScreen.halfPageDown": "alt+d",
    "tui.altScreen.lineUp": "alt+k",
    "tui.altScreen.lineDown": "alt+j",
}


def test_every_scroll_action_moves_the_transcript_by_its_amount(
    scripted: Scripted, launch: Launch
) -> None:
    import json

    # The half-page and line actions have no default key: bound here (keybindings.json).
    (scripted.agent_dir / "keybindings.json").write_text(json.dumps(KEYS))
    ui = _open(scripted, launch, 300)
    ui.wait_for("answer 0299 line 2")
    end = _pane(ui)
    height = len(end)
    assert _answers(end)[-1] == 299

    up = _after(ui, "PageUp", end)  # a page less one row: the old top row is now the bottom
    assert up[-1] == end[0] and up != end
    down = _after(ui, "PageDown", up)
    assert down == end
    half = _after(ui, "M-u", end)
    assert half[height // 2 :] == end[: height - height // 2]
    assert _after(ui, "M-d", half) == end
    line = _after(ui, "M-k", end)
    assert line[1:] == end[:-1]
    assert _after(ui, "M-j", line) == end

    top = _after(ui, "C-Home", end)
    assert _questions(top)[0] == 0 and "knightcode" in "\n".join(top[:3]).lower()
    below = _after(ui, "M-j", top)
    assert below[:-1] == top[1:]
    bottom = _after(ui, "C-End", below)
    assert bottom == end


def test_prompt_jumps_go_from_user_message_to_user_message(
    scripted: Scripted, launch: Launch
) -> None:
    ui = _open(scripted, launch, 300)
    ui.wait_for("answer 0299 line 2")
    end = _pane(ui)
    first_shown = _questions(end)[0]
    # The previous prompt above the top of the view comes to the top of the pane.
    jumped = _after(ui, "C-S-Up", end)
    assert _questions(jumped)[0] == first_shown - 1
    again = _after(ui, "C-S-Up", jumped)
    assert _questions(again)[0] == first_shown - 2
    forward = _after(ui, "C-S-Down", again)
    assert _questions(forward)[0] == first_shown - 1
    ui.send_keys("C-Home")
    ui.wait_for("question 0000")
    top = _pane(ui)  # the start-up header first, then question 0
    first = _after(ui, "C-S-Down", top)  # the first prompt below the top row comes to the top
    assert first[0].strip() == "question 0000" or first[1].strip() == "question 0000"
    assert _questions(_after(ui, "C-S-Down", first))[0] == 1


def test_a_rebound_altscreen_action_uses_the_new_key_only(
    scripted: Scripted, launch: Launch
) -> None:
    import json

    (scripted.agent_dir / "keybindings.json").write_text(
        json.dumps({"tui.altScreen.pageUp": "alt+p"})
    )
    ui = _open(scripted, launch, 300)
    ui.wait_for("answer 0299 line 2")
    end = _pane(ui)
    up = _after(ui, "M-p", end)
    assert up[-1] == end[0]
    ui.send_keys("C-End")
    ui.wait_for("answer 0299 line 2")
    ui.send_keys("PageUp")  # no longer the transcript's: the pane stays where it is
    import time

    time.sleep(0.3)
    assert _pane(ui) == end


def _highlighted(ui: TmuxSession, text: str) -> bool:
    """Whether ``text`` is drawn on a search highlight's background (yellow, or orange for the
    selected match) — the escape sequences right before it say so.
    """
    for found in re.finditer(r"((?:\x1b\[[0-9;]*m)+)" + re.escape(text), ui.capture(escapes=True)):
        codes = re.findall(r"\x1b\[([0-9;]*)m", found.group(1))
        if any(re.search(r"(^|;)(43|48;5;208|48;5;3)(;|$)", code) for code in codes):
            return True
    return False


def _wait_alternate(ui: TmuxSession, on: bool) -> None:
    """Wait until the terminal is in (or out of) the alternate screen."""
    import time

    deadline = time.monotonic() + 10
    want = "1" if on else "0"
    while ui.tmux("display-message", "-p", "-t", "main", "#{alternate_on}").strip() != want:
        assert time.monotonic() < deadline, ui.capture()
        time.sleep(0.05)


def _counter(ui: TmuxSession) -> tuple[int, int]:
    """The search bar's ``current/total``."""
    found = re.search(r"Search: .*?(\d+)/(\d+)", ui.capture())
    assert found is not None, ui.capture()
    return int(found.group(1)), int(found.group(2))


def test_search_a_thousand_message_transcript_with_next_previous_and_close(
    scripted: Scripted, launch: Launch
) -> None:
    ui = _open(scripted, launch, 500)  # 1,000 messages
    ui.send_keys("C-S-f")  # tui.altScreen.search
    ui.wait_for("Search:")
    ui.send_text("answer 0123 line 1")
    ui.wait_for(re.compile(r"Search: answer 0123 line 1\s+1/1"))
    assert any(line.strip() == "answer 0123 line 1" for line in _pane(ui))  # scrolled to it
    # The selected match is highlighted (a background colour on exactly that text).
    assert _highlighted(ui, "answer 0123 line 1")

    for _ in range(len(" 0123 line 1")):
        ui.send_keys("BSpace")
    ui.wait_for(re.compile(r"Search: answer\s+\d+/1500"))  # three lines per answer
    ui.send_text(" 0400")
    ui.wait_for(re.compile(r"Search: answer 0400\s+1/3"))
    ui.send_keys("Enter")  # tui.altScreen.searchNext
    ui.wait_for(re.compile(r"Search: answer 0400\s+2/3"))
    ui.send_keys("C-g")  # also searchNext
    ui.wait_for(re.compile(r"Search: answer 0400\s+3/3"))
    ui.send_keys("C-g")  # wraps around
    ui.wait_for(re.compile(r"Search: answer 0400\s+1/3"))
    ui.send_keys("S-Enter")  # tui.altScreen.searchPrevious
    ui.wait_for(re.compile(r"Search: answer 0400\s+3/3"))
    assert "answer 0400 line 2" in ui.capture()
    ui.send_keys("C-S-g")
    ui.wait_for(re.compile(r"Search: answer 0400\s+2/3"))
    assert _highlighted(ui, "answer 0400")

    ui.send_keys("Escape")  # tui.altScreen.searchClose
    ui.wait_gone("Search:")
    assert "answer 0400 line 1" in ui.capture()  # the view stays where the search left it
    assert not _highlighted(ui, "answer 0400")
    ui.send_text("typed")  # keys go to the editor again
    ui.wait_for("typed")


STATUS_PLUGIN = """
from knightcode import hookimpl


@hookimpl
def session_start(reason, previous_session_file, ctx):
    ctx.ui.set_status("demo", "plugin status line")
"""


def test_switching_to_fullscreen_and_back_prints_nothing_twice(
    scripted: Scripted, launch: Launch
) -> None:
    from knightcode.testing import text_reply

    scripted.server.add(text_reply("first answer"), text_reply("second answer"))
    plugin = scripted.project.parent / "status_plugin.py"
    plugin.write_text(STATUS_PLUGIN, encoding="utf-8")
    ui = launch("-e", str(plugin))
    ui.wait_for("plugin status line")
    ui.send_text("first question")
    ui.send_keys("Enter")
    ui.wait_for("first answer")
    ui.send_text("/fullscreen")
    ui.send_keys("Enter")
    _wait_alternate(ui, True)
    ui.wait_for("first answer")
    ui.wait_for(READY)
    assert "plugin status line" in ui.capture()  # what plugins set carries over
    ui.send_text("second question")
    ui.send_keys("Enter")
    ui.wait_for("second answer")
    ui.send_text("/fullscreen")
    ui.send_keys("Enter")
    _wait_alternate(ui, False)
    ui.wait_for("second answer")
    _settled(ui)
    history = ui.capture_history()
    for text in ("first question", "first answer", "second question", "second answer"):
        assert history.count(text) == 1, history
    assert history.index("first answer") < history.index("second question")
    sent = scripted.server.requests[-1].body["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        [{"type": "text", "text": "first question"}],
        [{"type": "text", "text": "second question"}],
    ]  # one session throughout


def _drag(ui: TmuxSession, first: str, last: str) -> None:
    """Press the left button on the row showing ``first``, drag to ``last``'s row, release —
    as SGR mouse reports (what the terminal sends once the program enabled the mouse).
    """
    rows = _pane(ui)
    assert last in "\n".join(rows), "\n".join(rows)
    start = next(n for n, line in enumerate(rows) if line.strip() == first) + 1
    end = next(n for n, line in enumerate(rows) if line.strip() == last) + 1
    ui.send_raw(f"\x1b[<0;5;{start}M".encode())
    ui.send_raw(f"\x1b[<32;6;{end}M".encode())
    ui.send_raw(f"\x1b[<0;6;{end}m".encode())


SELECTED = "answer 0000 line 0\n\nanswer 0000 line 1\n\nanswer 0000 line 2"


def test_a_mouse_selection_is_copied_on_release(scripted: Scripted, launch: Launch) -> None:
    ui = _open(scripted, launch, 300)
    ui.tmux("set-option", "-s", "set-clipboard", "on")  # tmux keeps what OSC 52 sends
    ui.send_keys("C-Home")
    ui.wait_for("question 0000")
    _drag(ui, "answer 0000 line 0", "answer 0000 line 2")
    ui.wait_for("↓ new output below")  # the notice went to the end of the transcript
    ui.send_keys("C-End")
    ui.wait_for("Copied 5 lines")
    assert "new output below" not in ui.capture()
    assert ui.tmux("show-buffer") == SELECTED


def test_without_copy_on_select_ctrl_x_copies_the_selection(
    scripted: Scripted, launch: Launch
) -> None:
    import json

    settings = json.loads((scripted.agent_dir / "settings.json").read_text())
    settings["fullscreenCopyOnSelect"] = False
    (scripted.agent_dir / "settings.json").write_text(json.dumps(settings))
    ui = _open(scripted, launch, 300)
    ui.tmux("set-option", "-s", "set-clipboard", "on")
    ui.send_keys("C-Home")
    ui.wait_for("question 0000")
    _drag(ui, "answer 0000 line 0", "answer 0000 line 2")
    import time

    time.sleep(0.3)
    assert "Copied" not in ui.capture()
    ui.send_keys("C-x")  # app.message.copy: the selection
    ui.send_keys("C-End")
    ui.wait_for("Copied 5 lines")
    assert ui.tmux("show-buffer") == SELECTED


def test_a_session_replaced_while_fullscreen_is_shown_afresh_back_inline(
    scripted: Scripted, launch: Launch
) -> None:
    from knightcode.testing import text_reply

    scripted.server.add(text_reply("old answer"))
    ui = launch()
    ui.send_text("old question")
    ui.send_keys("Enter")
    ui.wait_for("old answer")
    for command in ("/fullscreen", "/new"):
        ui.send_text(command)
        ui.send_keys("Enter")
        _wait_alternate(ui, True)
        ui.wait_for(READY)
    ui.wait_for("Started a new session")
    ui.send_text("/fullscreen")
    ui.send_keys("Enter")
    _wait_alternate(ui, False)
    ui.wait_for(READY)
    _settled(ui)
    assert "old answer" not in ui.capture_history()  # the replaced conversation is gone
    assert "knightcode v" in ui.capture_history()  # the new one shown from its start
