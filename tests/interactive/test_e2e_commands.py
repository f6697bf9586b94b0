"""Commands and dialogs of the interactive UI, used in a real tmux: /tree with a branch summary,
/resume and -r, the model selector, plugin dialogs, keybindings.json with /reload and /hotkeys,
/settings, /login — the real executable against the scripted server."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux

pytestmark = requires_tmux


def _entries(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def _ask(ui: object, text: str) -> None:
    ui.send_text(text)  # type: ignore[attr-defined]
    ui.send_keys("Enter")  # type: ignore[attr-defined]


def test_tree_moves_to_an_earlier_message_with_a_branch_summary(
    scripted: Scripted, launch: Launch
) -> None:
    scripted.server.add(
        text_reply("first answer"),
        text_reply("second answer"),
        text_reply("The user asked a second question and got a second answer."),
        text_reply("answer on the new branch"),
    )
    ui = launch()
    _ask(ui, "first question")
    ui.wait_for("first answer")
    _ask(ui, "second question")
    ui.wait_for("second answer")
    _ask(ui, "/tree")
    ui.wait_for("Session tree")
    ui.send_text("first question")  # type to search
    ui.wait_for(re.compile(r"→ .*user: first question"))
    ui.send_keys("Enter")
    ui.wait_for("Summarize the branch you leave?")
    ui.send_keys("Down", "Enter")  # "Summarize"
    ui.wait_for("Branch summary")
    # The chosen user message comes back into the editor, to edit and send again.
    ui.wait_for(re.compile(r"^─+\n\s*first question\s*\n─+$", re.M))
    ui.send_keys("C-u")  # delete to line start: an empty editor
    _ask(ui, "another direction")
    ui.wait_for("answer on the new branch")
    (path,) = scripted.session_files()
    kinds = [e["type"] for e in _entries(path)]
    assert "branch_summary" in kinds
    sent = scripted.server.requests[-1].body["messages"]
    assert "second question" not in [m["content"] for m in sent]  # left behind …
    assert "a second question" in json.dumps(sent)  # … and summarised


def test_resume_picks_an_earlier_session_and_shows_it(scripted: Scripted, launch: Launch) -> None:
    scripted.server.add(text_reply("remembered answer"), text_reply("continued"))
    first = launch()
    _ask(first, "an old conversation")
    first.wait_for("remembered answer")
    first.send_keys("C-d")
    assert first.wait_exit() == 0
    ui = launch("-r", ready="an old conversation")  # the picker lists it
    ui.send_keys("Enter")
    ui.wait_for("remembered answer")  # the conversation is shown again
    _ask(ui, "go on")
    ui.wait_for("continued")
    assert len(scripted.session_files()) == 1  # continued in the same file
    sent = scripted.server.requests[-1].body["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        [{"type": "text", "text": "an old conversation"}],
        [{"type": "text", "text": "go on"}],
    ]


def test_resume_command_inside_the_ui(scripted: Scripted, launch: Launch) -> None:
    scripted.server.add(text_reply("in the first"), text_reply("in the second"))
    ui = launch()
    _ask(ui, "session one")
    ui.wait_for("in the first")
    _ask(ui, "/new")
    ui.wait_for("Started a new session")
    _ask(ui, "session two")
    ui.wait_for("in the second")
    _ask(ui, "/resume")
    ui.wait_for("Resume session")
    ui.send_text('"session one"')  # an exact phrase (plain words are a fuzzy search)
    ui.wait_for('"session one"')  # typed into the search field
    ui.wait_gone(re.compile(r"^\s+session two\s+\d", re.M))  # the other session is filtered out
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"Resumed"))
    screen = ui.capture()
    assert "in the first" in screen and "in the second" not in screen


def test_model_selector_switches_models(scripted: Scripted, launch: Launch) -> None:
    models = json.loads((scripted.agent_dir / "models.json").read_text())
    models["providers"]["scripted"]["models"].append(
        {"id": "second-model", "contextWindow": 8000, "maxTokens": 1000}
    )
    (scripted.agent_dir / "models.json").write_text(json.dumps(models))
    scripted.server.add(text_reply("second speaking"))
    ui = launch()
    ui.send_keys("C-l")  # app.model.select
    ui.wait_for("second-model")
    ui.send_text("second")
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"scripted/second-model\s*$", re.M))
    _ask(ui, "who is there")
    ui.wait_for("second speaking")
    assert scripted.server.requests[-1].body["model"] == "second-model"


def test_ctrl_p_cycles_models(scripted: Scripted, launch: Launch) -> None:
    models = json.loads((scripted.agent_dir / "models.json").read_text())
    models["providers"]["scripted"]["models"].append({"id": "cycled-model"})
    (scripted.agent_dir / "models.json").write_text(json.dumps(models))
    ui = launch()
    ui.send_keys("C-p")
    ui.wait_for(re.compile(r"scripted/cycled-model\s*$", re.M))
    ui.send_keys("C-p")
    ui.wait_for(re.compile(r"Model: scripted/scripted-model\s*$", re.M))


PLUGIN = """
from knightcode import hookimpl


async def ask(args, ctx):
    colour = await ctx.ui.select("Pick a colour", ["red", "green", "blue"])
    sure = await ctx.ui.confirm("Really?", f"Use {colour}?")
    name = await ctx.ui.input("Your name", "type it")
    ctx.ui.set_status("demo", f"status: {colour}")
    ctx.ui.set_widget("demo", [f"widget line for {name}"])
    ctx.ui.notify(f"chose {colour}, sure={sure}, name={name}", "info")


@hookimpl
def register_commands(register):
    register(name="ask", description="Ask three questions", handler=ask)
"""


def test_plugin_dialogs_are_native(scripted: Scripted, launch: Launch) -> None:
    extension = scripted.project / "ask_ext.py"
    extension.write_text(PLUGIN)
    ui = launch("-e", str(extension))
    ui.send_text("/as")
    ui.wait_for(re.compile(r"ask\s+Ask three questions"))  # "/" completion with descriptions
    ui.send_text("k")
    ui.send_keys("Escape")  # close the completion menu
    ui.wait_gone(re.compile(r"ask\s+Ask three questions"))
    ui.send_keys("Enter")
    ui.wait_for("Pick a colour")
    ui.send_keys("Down", "Enter")
    ui.wait_for("Use green?")
    ui.send_text("y")
    ui.wait_for("Your name")
    ui.send_text("Ada")
    ui.send_keys("Enter")
    ui.wait_for("chose green, sure=True, name=Ada")
    ui.wait_for("widget line for Ada")
    ui.wait_for("status: green")


def test_keybindings_json_rebinding_reload_and_hotkeys(scripted: Scripted, launch: Launch) -> None:
    ui = launch()
    (scripted.agent_dir / "keybindings.json").write_text(
        json.dumps({"app.tools.expand": "ctrl+y", "app.nonsense": "ctrl+k", "app.exit": "bad++"})
    )
    _ask(ui, "/reload")
    ui.wait_for("Reloaded")
    ui.wait_for(re.compile(r"app\.nonsense"), history=True)  # the unknown action is warned
    _ask(ui, "/hotkeys")
    ui.wait_for(re.compile(r"ctrl\+y\s+Collapse or expand tool output"), history=True)
    history = ui.capture_history()
    assert re.search(r"ctrl\+d\s+Exit", history)  # an invalid key keeps the default


def test_settings_change_is_saved_and_applied(scripted: Scripted, launch: Launch) -> None:
    ui = launch()
    _ask(ui, "/settings")
    ui.wait_for("Steering mode")
    ui.send_text("")
    for _ in range(5):  # down to "Steering mode" (the sixth row)
        ui.send_keys("Down")
    ui.wait_for(re.compile(r"→ Steering mode"))
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"→ Steering mode\s+all"))
    ui.send_keys("Escape")
    ui.wait_for("Saved steeringMode = all")
    settings = json.loads((scripted.agent_dir / "settings.json").read_text())
    assert settings["steeringMode"] == "all"
    assert settings["retry"] == {"baseDelayMs": 10}  # the rest is kept


def test_login_stores_the_key_in_auth_json_readable_only_by_the_user(
    scripted: Scripted, launch: Launch
) -> None:
    ui = launch()
    _ask(ui, "/login openai")
    ui.wait_for("API key for openai")
    ui.send_text("sk-test-123")
    ui.wait_gone("sk-test-123")  # a password field never shows the key
    ui.send_keys("Enter")
    ui.wait_for("Saved the openai key")
    auth = scripted.agent_dir / "auth.json"
    assert json.loads(auth.read_text())["openai"]
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
    assert "sk-test-123" not in ui.capture_history()
