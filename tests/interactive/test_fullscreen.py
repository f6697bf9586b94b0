"""Fullscreen mode end to end: the real executable in tmux, in the alternate screen.

The session holds numbered exchanges (``question n`` / ``answer n line k``,
:mod:`tests.interactive.conversation`), so each assertion names exactly which lines are visible.
"""

from __future__ import annotations

import re

from knightcode.testing import TmuxSession
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux
from tests.interactive.conversation import write_conversation

pytestmark = requires_tmux


def _open(scripted: Scripted, launch: Launch, exchanges: int, *args: str) -> TmuxSession:
    path = write_conversation(scripted.project / "long.jsonl", scripted.project, exchanges)
    return launch("--fullscreen", "--session", str(path), *args)


def _questions(screen: str) -> list[int]:
    return [int(n) for n in re.findall(r"question (\d{4})", screen)]


def _answers(screen: str) -> list[int]:
    return [int(n) for n in re.findall(r"answer (\d{4}) line", screen)]


def test_fullscreen_opens_at_the_end_of_the_whole_session(
    scripted: Scripted, launch: Launch
) -> None:
    ui = _open(scripted, launch, 300)
    ui.wait_for("answer 0299 line 2")
    print(ui.capture())
    assert "earlier messages are not shown" not in ui.capture()  # all of it is there
