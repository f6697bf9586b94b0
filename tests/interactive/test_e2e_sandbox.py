"""The sandbox as a person meets it in the terminal: ``knightcode --sandbox bwrap`` shows the
sandbox in the status area, ``!pwd`` answers ``/workspace``, a tool's command runs inside and
writes through to the folder, and a refused sandbox says why before the UI opens.
"""

from __future__ import annotations

import json

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux
from tests.sandbox import factory_bwrap
from tests.sandbox.conftest import need

pytestmark = requires_tmux


def test_the_tools_and_bang_commands_run_in_the_sandbox(scripted: Scripted, launch: Launch) -> None:
    need(factory_bwrap)
    scripted.server.add(
        tool_call_reply(
            [tool_call("c1", "bash", {"command": "echo made > made.txt; ls -d /root 2>&1"})],
            text="Trying.",
        ),
        text_reply("All done."),
    )
    ui = launch("--sandbox", "bwrap", width=110)
    ui.wait_for("sandbox: bwrap")  # the status area names the active sandbox
    ui.send_text("!pwd")
    ui.send_keys("Enter")
    ui.wait_for("/workspace")
    ui.send_text("make a file")
    ui.send_keys("Enter")
    ui.wait_for("All done.")
    screen = ui.capture()
    assert "No such file or directory" in screen  # /root is not in the sandbox
    assert (scripted.project / "made.txt").read_text() == "made\n"
    ui.send_keys("C-d")
    assert ui.wait_exit() == 0


def test_a_refused_sandbox_says_why_and_never_opens(scripted: Scripted, launch: Launch) -> None:
    need(factory_bwrap)
    settings = {"sandbox": {"backend": "bwrap", "bwrap": {"binary": "/nonexistent/bwrap"}}}
    (scripted.agent_dir / "settings.json").write_text(json.dumps(settings))
    ui = launch(ready=None)
    assert ui.wait_exit() == 2
    history = ui.capture_history()
    assert "the sandbox cannot start" in history and "bwrap" in history
    assert "Traceback" not in history
