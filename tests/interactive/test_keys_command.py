"""``/keys`` in the real UI under tmux: the doctor's analysis from tmux's options, as a notice."""

from __future__ import annotations

import re

from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux

pytestmark = requires_tmux


def test_keys_reports_tmux_and_its_prefix(scripted: Scripted, launch: Launch) -> None:
    ui = launch(width=160, height=40)
    ui.send_text("/keys")
    ui.wait_for("/keys")
    ui.send_keys("Enter")
    ui.wait_for("tmux: extended-keys on; prefix ctrl+b", history=True)
    history = ui.capture_history()
    assert "keys reach knightcode as: modifyOtherKeys" in history
    assert re.search(r"ctrl\+b\s+tui\.editor\.cursorLeft\s+collides: tmux's prefix key", history)
    assert not re.search(r"shift\+enter\s+tui\.input\.newLine", history)
