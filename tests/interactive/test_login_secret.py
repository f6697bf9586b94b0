"""``/login llama.cpp`` asks for the router's key with a masked field: what is typed never shows
on the screen (a terminal being shared or recorded). The real executable in tmux.
"""

from __future__ import annotations

from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux

pytestmark = requires_tmux

KEY = "sekrit-key-4711"


def test_the_llama_cpp_key_is_masked_while_typed(scripted: Scripted, launch: Launch) -> None:
    ui = launch(KNIGHTCODE_LOAD_PLUGINS="builtin:llama.cpp")
    ui.send_text("/login llama.cpp")
    ui.send_keys("Enter")
    ui.wait_for("llama.cpp router URL")
    ui.send_keys("Enter")
    ui.wait_for("API key")
    ui.send_text(KEY)
    ui.wait_for("•" * 4)
    assert KEY not in ui.capture()
    ui.send_keys("Escape")
    ui.wait_gone("API key")
    assert KEY not in ui.capture()
