"""stdout that cannot be written (a full disk: ``> /dev/full``) is one line and exit 1, never a
traceback; the session is saved all the same. A reader that went away (``| head``) is not an
error."""

from __future__ import annotations

import subprocess
import sys

import pytest

from knightcode.testing import text_reply

from .conftest import MODEL, PROVIDER, Scripted


def run_into_full_disk(scripted: Scripted, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "knightcode", "--model", f"{PROVIDER}/{MODEL}", *args]
    with open("/dev/full", "wb") as full:
        return subprocess.run(
            command,
            cwd=scripted.project,
            env=scripted.env(),
            stdin=subprocess.DEVNULL,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]], ids=["text", "json"])
def test_a_full_stdout_is_one_line_and_exit_1(scripted: Scripted, mode: list[str]) -> None:
    scripted.server.add(text_reply("the answer"))
    result = run_into_full_disk(scripted, *mode, "hi")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("knightcode: error: cannot write") and "No space left" in line
    roles = [e["message"]["role"] for e in scripted.session_entries() if e["type"] == "message"]
    assert roles == ["user", "assistant"]  # the session has the answer


def test_a_reader_that_went_away_is_not_an_error(scripted: Scripted) -> None:
    scripted.server.add(text_reply("the answer " * 20_000))
    command = [sys.executable, "-m", "knightcode", "--model", f"{PROVIDER}/{MODEL}", "-p", "hi"]
    process = subprocess.Popen(
        command,
        cwd=scripted.project,
        env=scripted.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # like `| head -0`
    err = process.stderr.read()
    assert process.wait(timeout=60) == 0, err
    assert b"Traceback" not in err and err == b""
