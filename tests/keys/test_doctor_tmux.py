"""``knightcode keys doctor`` for real: the executable in a private tmux server (its own socket),
once with ``extended-keys`` off and once on, reading tmux's options and the keys tmux sends.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from knightcode.testing import TmuxSession
from knightcode.testing.tmux import tmux_available

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")

_NEWLINE = re.compile(r"shift\+enter\s+tui\.input\.newLine\s+cannot be delivered.*ctrl\+j")


def _doctor(agent_dir: Path, *args: str, extended_keys: str) -> TmuxSession:
    env = dict(os.environ, KNIGHTCODE_CODING_AGENT_DIR=str(agent_dir))
    command = [sys.executable, "-m", "knightcode", "keys", "doctor", *args]
    return TmuxSession.start(
        command, cwd=agent_dir, env=env, width=160, height=50, extended_keys=extended_keys
    )


@pytest.fixture
def agent_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "agent"
    folder.mkdir()
    yield folder


def test_extended_keys_off_reports_shift_enter_and_proposes_ctrl_j(agent_dir: Path) -> None:
    with _doctor(agent_dir, extended_keys="off") as tmux:
        tmux.wait_for("[y/N]")
        screen = tmux.capture()
        tmux.send_text("n")
        tmux.wait_for("Press keys to see their ids")
        assert "tmux: extended-keys off; prefix ctrl+b" in screen
        assert "keys reach knightcode as: legacy" in screen
        assert _NEWLINE.search(screen), screen
        # Nothing was written when the answer was no.
        assert not (agent_dir / "keybindings.json").exists()
        # The echo decodes what arrives. (Not shift+enter here: ``send-keys`` makes the key inside
        # tmux, which then encodes it for the pane anyway; with extended-keys off what tmux never
        # gets from the real terminal is the modifier.)
        tmux.send_keys("Enter")
        tmux.wait_for(re.compile(r"key: enter, ctrl\+m"))
        tmux.send_keys("M-p")
        tmux.wait_for("key: alt+p")
        tmux.send_keys("C-c", "C-c")
        assert tmux.wait_exit() == 0


def test_extended_keys_on_does_not_report_shift_enter_and_echoes_it(agent_dir: Path) -> None:
    with _doctor(agent_dir, extended_keys="on") as tmux:
        tmux.wait_for("Press keys to see their ids")
        screen = tmux.capture()
        assert "tmux: extended-keys on" in screen
        assert "keys reach knightcode as: modifyOtherKeys" in screen
        assert "shift+enter" not in screen
        for key, key_id in (
            ("S-Enter", "shift+enter"),
            ("C-S-Up", "ctrl+shift+up"),
            ("M-p", "alt+p"),
        ):
            tmux.send_keys(key)
            tmux.wait_for(f"key: {key_id}")
        tmux.send_keys("C-c", "C-c")
        assert tmux.wait_exit() == 0


def test_write_adds_the_proposals_and_keeps_the_file(agent_dir: Path) -> None:
    path = agent_dir / "keybindings.json"
    path.write_text(json.dumps({"app.session.new": "alt+n"}))
    path.chmod(0o600)
    with _doctor(agent_dir, "--write", "--no-echo", extended_keys="off") as tmux:
        tmux.wait_for(f"wrote {path}")
        assert tmux.wait_exit() == 0
    data = json.loads(path.read_text())
    assert data["app.session.new"] == "alt+n"
    assert data["app.model.cycleBackward"] == ["ctrl+shift+p", "alt+p"]
    assert data["tui.altScreen.searchPrevious"] == ["shift+enter", "ctrl+shift+g", "ctrl+j"]
    assert "tui.input.newLine" not in data
    assert data["$schema"] == "https://knightcode.dev/schemas/keybindings.schema.json"
    assert path.stat().st_mode & 0o777 == 0o600
