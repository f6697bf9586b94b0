"""The tmux driver against real programs: what bytes keys arrive as, screens, waits, exit status."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from knightcode.testing import TmuxSession
from knightcode.testing.tmux import TmuxError, tmux_available

# .ci/run installs tmux and sets KNIGHTCODE_REQUIRE_TMUX=1: there a missing tmux fails the tests
pytestmark = pytest.mark.skipif(
    not tmux_available() and not os.environ.get("KNIGHTCODE_REQUIRE_TMUX"),
    reason="tmux is not installed",
)

# A program that asks for xterm's modifyOtherKeys (as a terminal UI does), then shows each byte it
# reads: `cat -v` prints ESC as ^[, and the tty is raw so keys are not echoed or line-buffered.
KEYS_PROGRAM = "printf '\\033[>4;2m'; stty raw -echo; echo READY; exec cat -v"


@pytest.fixture
def keys(tmp_path: Path) -> Iterator[TmuxSession]:
    with TmuxSession.start(["sh", "-c", KEYS_PROGRAM], cwd=tmp_path, width=80, height=10) as tmux:
        tmux.wait_for("READY")
        yield tmux


def typed(tmux: TmuxSession) -> str:
    """What ``cat -v`` printed after READY (the bytes received, made visible)."""
    return tmux.capture().split("READY", 1)[1].strip()


def test_shift_enter_arrives_as_csi_u_once_modify_other_keys_is_on(keys: TmuxSession) -> None:
    keys.send_keys("S-Enter", "C-Enter", "BTab", "C-S-f", "C-BSpace")
    keys.send_text("|")
    keys.wait_for("|")
    assert typed(keys) == "^[[13;2u^[[13;5u^[[Z^[[70;6u^[[127;5u|"


def test_without_modify_other_keys_shift_enter_is_not_a_csi_sequence(tmp_path: Path) -> None:
    program = "stty raw -echo; echo READY; exec cat -v"
    with TmuxSession.start(["sh", "-c", program], cwd=tmp_path, width=80, height=10) as tmux:
        tmux.wait_for("READY")
        tmux.send_keys("S-Enter")
        tmux.send_text("|")
        tmux.wait_for("|")
        assert "^[[13;2u" not in typed(tmux)  # tmux 3.3 types "S-Enter"


def test_send_text_is_literal_and_send_raw_sends_exact_bytes(keys: TmuxSession) -> None:
    keys.send_text("Enter C-d é")  # key names inside text are not looked up
    keys.send_raw(b"\x1b[13;2u\x1b[27;5;13~\xc3\xa9|")
    keys.wait_for("|")
    assert typed(keys) == "Enter C-d M-CM-)^[[13;2u^[[27;5;13~M-CM-)|"


def test_control_keys_and_escape(keys: TmuxSession) -> None:
    keys.send_keys("C-a", "Escape", "Up", "BSpace")
    keys.send_text("|")
    keys.wait_for("|")
    assert typed(keys) == "^A^[^[[A^?|"


def test_exit_status_and_last_screen_survive_the_program(tmp_path: Path) -> None:
    # (the sleep: tmux 3.3 may lose what a program writes if it ends within ms of its start)
    with TmuxSession.start(["sh", "-c", "echo bye; sleep 0.1; exit 3"], cwd=tmp_path) as tmux:
        assert tmux.wait_exit() == 3
        assert tmux.capture() == "bye"


def test_killed_by_a_signal_is_negative(tmp_path: Path) -> None:
    with TmuxSession.start(["sh", "-c", "kill -TERM $$"], cwd=tmp_path) as tmux:
        assert tmux.wait_exit() == -15


def test_running_program_has_no_exit_status(tmp_path: Path) -> None:
    with TmuxSession.start(["sleep", "30"], cwd=tmp_path) as tmux:
        assert tmux.exit_status() is None
        with pytest.raises(AssertionError, match="still running"):
            tmux.wait_exit(timeout=0.1)


def test_wait_for_timeout_shows_the_screen(tmp_path: Path) -> None:
    with TmuxSession.start(["sh", "-c", "echo on screen; sleep 30"], cwd=tmp_path) as tmux:
        tmux.wait_for("on screen")
        with pytest.raises(AssertionError) as failure:
            tmux.wait_for("never shown", timeout=0.2)
        message = str(failure.value)
        assert "text 'never shown' not on the screen after 0.2 s" in message
        assert "on screen" in message


def test_wait_for_fails_at_once_when_the_program_ended_without_showing_it(tmp_path: Path) -> None:
    with TmuxSession.start(["sh", "-c", "echo not ready; sleep 0.1; exit 2"], cwd=tmp_path) as tmux:
        started = time.monotonic()
        with pytest.raises(AssertionError) as failure:
            tmux.wait_for("ready>", timeout=30)
        assert time.monotonic() - started < 5
        assert "text 'ready>' not on the screen: the program exited with status 2" in str(
            failure.value
        )
        assert "not ready" in str(failure.value)
        assert tmux.wait_for("not ready").group() == "not ready"  # what it did show still matches


def test_wait_for_matches_str_literally_and_patterns_as_regex(tmp_path: Path) -> None:
    with TmuxSession.start(["sh", "-c", "echo 'a.b [x] 42'; sleep 30"], cwd=tmp_path) as tmux:
        assert tmux.wait_for("[x]").group() == "[x]"
        assert tmux.wait_for(re.compile(r"(\d+)$", re.MULTILINE)).group(1) == "42"
        with pytest.raises(AssertionError):
            tmux.wait_for("a-b", timeout=0.1)


def test_wait_gone(tmp_path: Path) -> None:
    program = "stty -echo; printf 'busy'; read line; printf '\\033[2J\\033[Hdone'; sleep 30"
    with TmuxSession.start(["sh", "-c", program], cwd=tmp_path) as tmux:
        tmux.wait_for("busy")
        with pytest.raises(AssertionError, match="still on the screen"):
            tmux.wait_gone("busy", timeout=0.1)
        tmux.send_keys("Enter")
        tmux.wait_gone("busy")
        assert tmux.capture() == "done"


def test_history_holds_what_scrolled_off(tmp_path: Path) -> None:
    program = "seq 1 200; sleep 30"
    with TmuxSession.start(["sh", "-c", program], cwd=tmp_path, height=10) as tmux:
        tmux.wait_for(re.compile(r"^200$", re.MULTILINE))
        assert "\n1\n" not in "\n" + tmux.capture() + "\n"
        assert tmux.capture_history().split("\n")[:3] == ["1", "2", "3"]
        tmux.wait_for(re.compile(r"^1$", re.MULTILINE), history=True)


def test_environment_cwd_terminal_and_size(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "KC_PROBE": "probe-value"}
    program = 'echo "$KC_PROBE $(pwd) $TERM $(stty size)"; sleep 30'
    with TmuxSession.start(
        ["sh", "-c", program], cwd=tmp_path, env=env, width=90, height=12
    ) as tmux:
        probe, cwd, term, rows, columns = (
            tmux.wait_for(re.compile(r"probe-value .+")).group().split()
        )
        assert (probe, cwd, rows, columns) == ("probe-value", str(tmp_path), "12", "90")
        assert term in {"tmux-256color", "screen-256color"}
        assert tmux.size() == (90, 12)


def test_resize_reaches_the_program(tmp_path: Path) -> None:
    program = "trap 'echo \"size $(stty size)\"' WINCH; echo READY; while :; do sleep 0.05; done"
    with TmuxSession.start(["sh", "-c", program], cwd=tmp_path, width=80, height=20) as tmux:
        tmux.wait_for("READY")
        tmux.resize(60, 15)
        tmux.wait_for("size 15 60")
        assert tmux.size() == (60, 15)


def test_bracketed_paste(tmp_path: Path) -> None:
    program = "printf '\\033[?2004h'; stty raw -echo; echo READY; exec cat -v"
    with TmuxSession.start(["sh", "-c", program], cwd=tmp_path, width=80, height=10) as tmux:
        tmux.wait_for("READY")
        tmux.paste("one\ntwo")
        tmux.send_text("|")
        tmux.wait_for("|")
        assert typed(tmux) == "^[[200~one^Mtwo^[[201~|"


def test_colours_are_kept_on_request(tmp_path: Path) -> None:
    program = "printf '\\033[31mred\\033[0m\\n'; sleep 30"
    with TmuxSession.start(["sh", "-c", program], cwd=tmp_path) as tmux:
        tmux.wait_for("red")
        assert tmux.capture() == "red"
        assert "\x1b[31mred" in tmux.capture(escapes=True)


def test_kill_stops_the_server_and_the_program_and_removes_the_socket(tmp_path: Path) -> None:
    # a program that ignores SIGHUP is killed too
    tmux = TmuxSession.start(["sh", "-c", "trap '' HUP; echo READY; exec sleep 30"], cwd=tmp_path)
    tmux.wait_for("READY")
    pid = tmux.pid()
    socket = Path(tmux.socket)
    assert socket.exists()
    tmux.kill()
    assert not tmux.alive
    assert not socket.parent.exists()
    with pytest.raises(TmuxError):
        tmux.capture()
    # the program got SIGHUP with the server and kill() waited for it to end
    assert (
        not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    )
    tmux.kill()  # a second kill is harmless


def test_a_python_program_sees_a_tty(tmp_path: Path) -> None:
    code = "import sys; print('tty', sys.stdin.isatty(), sys.stdout.isatty()); input()"
    with TmuxSession.start([sys.executable, "-c", code], cwd=tmp_path) as tmux:
        tmux.wait_for("tty True True")
        tmux.send_keys("Enter")
        assert tmux.wait_exit() == 0


def test_tmux_missing_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TmuxError, match="tmux is not installed"):
        TmuxSession.start(["true"], cwd=tmp_path)
