"""``--verbose`` shows the start-up header that setting ``quietStartup`` hides (the real
executable in tmux against the scripted server)."""

from __future__ import annotations

import json

from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux

pytestmark = requires_tmux


def test_verbose_overrides_quiet_startup(scripted: Scripted, launch: Launch) -> None:
    settings = scripted.agent_dir / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "quietStartup": True}))
    quiet = launch()
    assert "knightcode v" not in quiet.capture()
    quiet.send_keys("C-d")
    assert quiet.wait_exit() == 0
    loud = launch("--verbose")
    loud.wait_for("knightcode v")
    loud.send_keys("C-d")
    assert loud.wait_exit() == 0
