"""``/tools`` in a real tmux: a person opens the menu, switches a tool off and sets the Brave
key with the masked input — the key never appears on the screen, in the scrollback or the
session file, and the next request to the (scripted) model lacks the tool."""

from __future__ import annotations

import json
import re
import stat

from knightcode.testing import text_reply
from knightcode_builtins.web_tools.config import load_tools_config, tools_json_path
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux

pytestmark = requires_tmux

SECRET = "BSA-tmux-secret-9a8b7c6d5e"


def test_tools_menu_switches_a_tool_and_sets_the_key_masked(
    scripted: Scripted, launch: Launch
) -> None:
    scripted.server.add(text_reply("first"), text_reply("second"))
    ui = launch(KNIGHTCODE_LOAD_PLUGINS="builtin:web-tools")
    ui.send_text("hello")
    ui.send_keys("Enter")
    ui.wait_for("first")
    tools_offered = [t["function"]["name"] for t in scripted.server.requests[0].body["tools"]]
    assert "web_fetch" in tools_offered

    ui.send_text("/tools")
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"→ Tools: 6 of 10 on"))
    ui.wait_for("Brave key: not set")
    ui.send_keys("Enter")  # the tool list
    ui.wait_for(re.compile(r"web_fetch\s+on\s+builtin:web-tools"))
    ui.send_text("web_fetch")  # type to filter, then switch it
    ui.wait_gone(re.compile(r"web_search\s+on"))
    ui.send_keys("Enter")
    ui.wait_for("web_fetch off from the next request, and for new sessions")
    ui.wait_for(re.compile(r"web_fetch\s+off\s+builtin:web-tools"))  # the list, anew
    ui.wait_for(re.compile(r"web_search\s+on\s+builtin:web-tools"))
    ui.send_keys("Escape")  # back at the top, which counts the change
    ui.wait_for(re.compile(r"→ Tools: 5 of 10 on"))

    ui.send_keys("Down", "Enter")  # Brave key
    ui.wait_for("Brave Search key: not set")
    ui.send_keys("Enter")  # Set a new key
    ui.wait_for("Brave Search API key")
    ui.send_text(SECRET)
    ui.wait_for("•" * len(SECRET))  # what was typed arrived, as dots
    assert SECRET not in ui.capture()
    ui.send_keys("Enter")
    ui.wait_for("Stored the Brave key in")
    ui.wait_for("Brave Search key: set (tools.json)")  # back at the key's menu
    ui.send_keys("Escape")
    ui.wait_for(re.compile(r"Brave key: set \(tools\.json\)"))
    ui.send_keys("Escape")  # /tools closes; the editor is back
    ui.wait_gone("Brave key: set")

    ui.send_text("again")
    ui.send_keys("Enter")
    ui.wait_for("second")
    tools_offered = [t["function"]["name"] for t in scripted.server.requests[1].body["tools"]]
    assert "web_fetch" not in tools_offered and "web_search" in tools_offered

    assert SECRET not in ui.capture_history()
    path = tools_json_path(scripted.agent_dir)
    assert load_tools_config(scripted.agent_dir).brave_api_key == SECRET
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    settings = json.loads((scripted.agent_dir / "settings.json").read_text())
    assert settings["tools"]["enabled"] == {"web_fetch": False}
    assert settings["retry"] == {"baseDelayMs": 10}  # the rest is kept
    sessions = list((scripted.agent_dir / "sessions").rglob("*.jsonl"))
    assert sessions and all(SECRET not in session.read_text() for session in sessions)
