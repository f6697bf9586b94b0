"""``knightcode keys doctor`` without a terminal (output to a pipe): the report from the
environment and a real private tmux server named by ``$TMUX``, ``--write``, and a broken file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from knightcode.testing import TmuxSession
from knightcode.testing.tmux import tmux_available

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


@pytest.fixture
def tmux_off() -> Iterator[TmuxSession]:
    """A private tmux server with extended-keys off (its pane just waits)."""
    with TmuxSession.start(["sleep", "600"], extended_keys="off") as tmux:
        yield tmux


def _doctor(
    agent_dir: Path, tmux: TmuxSession | None, *args: str
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, KNIGHTCODE_CODING_AGENT_DIR=str(agent_dir))
    env.pop("TMUX", None)
    env.pop("STY", None)
    if tmux is not None:
        env["TMUX"] = f"{tmux.socket},1,0"
    return subprocess.run(
        [sys.executable, "-m", "knightcode", "keys", "doctor", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_without_a_terminal_or_multiplexer_nothing_is_claimed(tmp_path: Path) -> None:
    done = _doctor(tmp_path, None)
    assert done.returncode == 0, done.stderr
    assert "terminal answered: not asked" in done.stdout
    assert "No binding is known not to work here" in done.stdout


def test_reads_tmux_named_by_the_environment(tmp_path: Path, tmux_off: TmuxSession) -> None:
    done = _doctor(tmp_path, tmux_off)
    assert done.returncode == 0, done.stderr
    assert "tmux: extended-keys off; prefix ctrl+b" in done.stdout
    assert "(knightcode keys doctor --write writes them)" in done.stdout
    assert not (tmp_path / "keybindings.json").exists()
    written = _doctor(tmp_path, tmux_off, "--write")
    assert written.returncode == 0, written.stderr
    data = json.loads((tmp_path / "keybindings.json").read_text())
    assert data["app.model.cycleBackward"] == ["ctrl+shift+p", "alt+p"]


def test_a_broken_file_is_not_overwritten(tmp_path: Path, tmux_off: TmuxSession) -> None:
    path = tmp_path / "keybindings.json"
    path.write_text("{ not json")
    done = _doctor(tmp_path, tmux_off, "--write")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert f"knightcode: error: {path}" in done.stderr and "not overwriting it" in done.stderr
    assert path.read_text() == "{ not json"


def test_plugin_shortcuts_are_analysed(tmp_path: Path, tmux_off: TmuxSession) -> None:
    extensions = tmp_path / "extensions"
    extensions.mkdir()
    example = (
        Path(__file__).resolve().parents[2] / "docs" / "hook_examples" / "register_shortcuts.py"
    )
    shutil.copy(example, extensions / "cwd_key.py")
    done = _doctor(tmp_path, tmux_off)
    assert done.returncode == 0, done.stderr
    assert re.search(r"ctrl\+shift\+w\s+plugin:\S*cwd_key.*a plugin's key", done.stdout), (
        done.stdout
    )
