"""Themes in a real tmux: /settings previews and switches the theme (the captured colours
change, cancel restores them), ``--theme`` loads a file, an edited theme file applies at once,
an invalid theme is reported by its token — the real executable against the scripted server.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from knightcode.testing import TmuxSession, text_reply
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux
from tests.themes.support import valid_theme, write_theme

pytestmark = requires_tmux

DARK_USER_BG = "48;2;43;47;54"  # dark.json's userMessageBg #2b2f36, as tmux reports it
LIGHT_USER_BG = "48;2;232;235;240"  # light.json's #e8ebf0
DARK_BACKGROUND = {"COLORFGBG": "15;0"}  # the terminal says: light text on black


def _ask(ui: TmuxSession, text: str) -> None:
    ui.send_text(text)
    ui.send_keys("Enter")


def wait_for_colour(
    ui: TmuxSession, sgr: str, *, present: bool = True, timeout: float = 10
) -> None:
    """Wait until the screen shows (or no longer shows) the SGR parameters ``sgr``."""
    deadline = time.monotonic() + timeout
    while (sgr in ui.capture(escapes=True)) != present:
        if time.monotonic() > deadline:
            state = "never appeared" if present else "did not go away"
            raise AssertionError(f"{sgr!r} {state}:\n{ui.capture(escapes=True)}")
        time.sleep(0.05)


def border_sgr(ui: TmuxSession, timeout: float = 5) -> str:
    """The escape sequences before the editor's bottom border (its colour), once it is drawn."""
    deadline = time.monotonic() + timeout
    while True:
        lines = ui.capture(escapes=True).split("\n")
        border = [line for line in lines if "─" * 20 in line]
        if border:
            return border[-1][: border[-1].index("─")]
        if time.monotonic() > deadline:
            raise AssertionError("no editor border on the screen:\n" + "\n".join(lines))
        time.sleep(0.05)


def line_sgr(ui: TmuxSession, marker: str, timeout: float = 5) -> str:
    """The escape sequences before ``marker`` on the line that shows it (its colour)."""
    deadline = time.monotonic() + timeout
    while True:
        for line in ui.capture(escapes=True).split("\n"):
            if marker in line:
                return line[: line.index(marker)]
        if time.monotonic() > deadline:
            raise AssertionError(f"{marker!r} is not on the screen")
        time.sleep(0.05)


def dark_session_with_a_message(scripted: Scripted, launch: Launch) -> TmuxSession:
    """A session on a dark terminal, one question answered (its user message shows the
    theme's ``userMessageBg``).
    """
    scripted.server.add(text_reply("an answer"))
    ui = launch(**DARK_BACKGROUND)
    _ask(ui, "a question")
    ui.wait_for("an answer")
    wait_for_colour(ui, DARK_USER_BG)
    return ui


def test_settings_previews_the_theme_cancel_restores_and_choosing_saves_it(
    scripted: Scripted, launch: Launch
) -> None:
    ui = dark_session_with_a_message(scripted, launch)
    dark_border = border_sgr(ui)
    _ask(ui, "/settings")
    ui.wait_for("Steering mode")
    for _ in range(10):  # down to "Theme" (the eleventh row)
        ui.send_keys("Down")
    ui.wait_for("→ Theme")
    ui.send_keys("Enter")  # the theme list
    ui.wait_for("(current)")
    dark_accent = line_sgr(ui, "→ dark")
    ui.send_keys("Down")  # previews light
    wait_for_colour(ui, LIGHT_USER_BG)
    wait_for_colour(ui, DARK_USER_BG, present=False)
    assert line_sgr(ui, "→ light") != dark_accent  # the dialog is drawn in the theme too
    ui.send_keys("Escape")  # cancel: dark again
    wait_for_colour(ui, DARK_USER_BG)
    ui.send_keys("Enter")
    ui.wait_for("(current)")
    ui.send_keys("Down")
    ui.send_keys("Enter")  # choose light
    ui.send_keys("Escape")  # close /settings: saved
    ui.wait_for("Saved theme = light")
    wait_for_colour(ui, LIGHT_USER_BG)
    assert border_sgr(ui) != dark_border  # the editor's border: light's thinkingOff
    settings = json.loads((scripted.agent_dir / "settings.json").read_text())
    assert settings["theme"] == "light"
    assert settings["retry"] == {"baseDelayMs": 10}


def test_theme_flag_loads_a_file_and_an_edit_applies_at_once(
    scripted: Scripted, launch: Launch, tmp_path: Path
) -> None:
    path = write_theme(tmp_path / "mine", valid_theme("mine", userMessageBg="#102030"))
    scripted.server.add(text_reply("an answer"))
    ui = launch("--theme", str(path), **DARK_BACKGROUND)
    _ask(ui, "a question")
    ui.wait_for("an answer")
    wait_for_colour(ui, "48;2;16;32;48")
    write_theme(path.parent, valid_theme("mine", userMessageBg="#405060"))
    wait_for_colour(ui, "48;2;64;80;96")
    ui.wait_for("Theme mine reloaded")


def test_an_invalid_theme_is_reported_by_its_token_and_the_default_is_used(
    scripted: Scripted, launch: Launch
) -> None:
    broken = valid_theme("broken", accent="#12", mdHr="nothere")
    write_theme(scripted.agent_dir / "themes", broken)
    settings = json.loads((scripted.agent_dir / "settings.json").read_text())
    (scripted.agent_dir / "settings.json").write_text(json.dumps({**settings, "theme": "broken"}))
    scripted.server.add(text_reply("an answer"))
    ui = launch(**DARK_BACKGROUND)
    ui.wait_for("colors.accent: bad colour value")
    ui.wait_for('colors.mdHr: undefined variable "nothere"')
    _ask(ui, "a question")
    ui.wait_for("an answer")
    wait_for_colour(ui, DARK_USER_BG)


def test_reload_finds_a_new_theme_and_applies_the_edited_setting(
    scripted: Scripted, launch: Launch
) -> None:
    ui = dark_session_with_a_message(scripted, launch)
    write_theme(scripted.agent_dir / "themes", valid_theme("added", userMessageBg="#203040"))
    settings_path = scripted.agent_dir / "settings.json"
    settings = json.loads(settings_path.read_text())
    settings_path.write_text(json.dumps({**settings, "theme": "added"}))
    _ask(ui, "/reload")
    ui.wait_for("Reloaded plugins")
    wait_for_colour(ui, "48;2;32;48;64")


def test_the_editor_border_shows_bash_mode_in_the_themes_colour(launch: Launch) -> None:
    ui = launch(**DARK_BACKGROUND)
    normal = border_sgr(ui)
    ui.send_text("!ls")
    deadline = time.monotonic() + 5
    while border_sgr(ui) == normal:
        assert time.monotonic() < deadline, "the border did not change for a ! command"
        time.sleep(0.05)
    for _ in range(3):
        ui.send_keys("BSpace")
    deadline = time.monotonic() + 5
    while border_sgr(ui) != normal:
        assert time.monotonic() < deadline, "the border did not come back"
        time.sleep(0.05)


def test_no_themes_leaves_discovered_themes_out(scripted: Scripted, launch: Launch) -> None:
    write_theme(scripted.agent_dir / "themes", valid_theme("mine", userMessageBg="#102030"))
    settings = json.loads((scripted.agent_dir / "settings.json").read_text())
    (scripted.agent_dir / "settings.json").write_text(json.dumps({**settings, "theme": "mine"}))
    scripted.server.add(text_reply("an answer"))
    ui = launch("--no-themes", **DARK_BACKGROUND)
    ui.wait_for('theme "mine" not found')
    _ask(ui, "a question")
    ui.wait_for("an answer")
    wait_for_colour(ui, DARK_USER_BG)  # the built-in default, not mine's #102030
    assert "48;2;16;32;48" not in ui.capture(escapes=True)
