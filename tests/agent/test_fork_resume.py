"""``--fork PATH|ID`` (a new session that starts as a copy), ``--resume`` outside the UI and
``-c``/``--continue``, with the real executable against the scripted server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted


def _header(path: Path) -> dict[str, Any]:
    header: dict[str, Any] = json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])
    return header


def _first_session(scripted: Scripted) -> Path:
    scripted.server.add(text_reply("noted"))
    assert scripted.run("-p", "remember the word kumquat").returncode == 0
    (path,) = scripted.session_files()
    return path


@pytest.mark.parametrize("how", ["path", "id-prefix"])
def test_fork_continues_in_a_new_file_and_leaves_the_source_alone(
    scripted: Scripted, how: str
) -> None:
    source = _first_session(scripted)
    before = source.read_bytes()
    reference = str(source) if how == "path" else _header(source)["id"][:10]
    scripted.server.add(text_reply("it was kumquat"))
    result = scripted.run("--fork", reference, "-p", "which word?")
    assert result.returncode == 0, result.stderr
    assert source.read_bytes() == before
    (fork,) = [path for path in scripted.session_files() if path != source]
    assert _header(fork)["id"] != _header(source)["id"]
    text = fork.read_text(encoding="utf-8")
    assert "remember the word kumquat" in text and "which word?" in text
    # The model saw the copied conversation.
    assert "kumquat" in json.dumps(scripted.server.requests[-1].body["messages"][:-1])


def test_fork_of_an_unknown_session_is_a_clear_error(scripted: Scripted) -> None:
    result = scripted.run("--fork", "no-such-session-id", "-p", "hi")
    assert result.returncode == 2
    assert "--fork 'no-such-session-id': no session has this id" in result.stderr
    assert scripted.session_files() == [] and scripted.server.requests == []


def test_fork_of_a_missing_file_is_a_clear_error(scripted: Scripted) -> None:
    result = scripted.run("--fork", "gone/away.jsonl", "-p", "hi")
    assert result.returncode == 2
    assert "--fork gone/away.jsonl: no such session file" in result.stderr
    assert scripted.server.requests == []


@pytest.mark.parametrize("other", ["--session", "-c", "--resume", "--no-session"])
def test_fork_excludes_the_other_session_choices(scripted: Scripted, other: str) -> None:
    args = [other, "x"] if other == "--session" else [other]
    result = scripted.run("--fork", "abc", *args, "-p", "hi")
    assert result.returncode == 2
    assert f"--fork and {other if other != '-c' else '--continue'} cannot" in result.stderr


@pytest.mark.parametrize("mode", [("-p", "hi"), ("--mode", "json", "hi"), ("--mode", "rpc")])
def test_resume_without_the_interactive_ui_says_what_to_use(
    scripted: Scripted, mode: tuple[str, ...]
) -> None:
    result = scripted.run("--resume", *mode, timeout=30)
    assert result.returncode == 2
    assert "--resume picks a session in the interactive UI" in result.stderr
    assert "-c" in result.stderr and "Traceback" not in result.stderr


def test_continue_picks_the_most_recent_session(scripted: Scripted) -> None:
    source = _first_session(scripted)
    scripted.server.add(text_reply("still kumquat"))
    result = scripted.run("-c", "-p", "which word?")
    assert result.returncode == 0, result.stderr
    assert scripted.session_files() == [source]
    assert "which word?" in source.read_text(encoding="utf-8")
