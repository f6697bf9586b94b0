"""``query_terminal`` over a real pseudo-terminal in raw mode, with a stand-in terminal on the other
side answering as Kitty, as xterm (modifyOtherKeys) or not at all. The stand-in is the only
substitute: no real terminal emulator runs here (tmux answers neither query).
"""

from __future__ import annotations

import os
import pty
import threading
import time
import tty

import pytest

from knightcode._keys.probe import QUERY, query_terminal


def _run(answer: bytes | None, timeout: float = 2.0) -> tuple[str, bytes, float, bytes]:
    leader, follower = pty.openpty()
    tty.setraw(follower)
    received: list[bytes] = []

    def terminal() -> None:
        data = b""
        while not data.endswith(b"\x1b[c"):
            data += os.read(leader, 1024)
        received.append(data)
        if answer is not None:
            os.write(leader, answer)

    thread = threading.Thread(target=terminal, daemon=True)
    thread.start()
    started = time.monotonic()
    try:
        encoding, replies = query_terminal(follower, follower, timeout)
    finally:
        elapsed = time.monotonic() - started
        thread.join(5)
        os.close(follower)
        os.close(leader)
    return encoding, replies, elapsed, received[0]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (b"\x1b[>4;0m\x1b[?1u\x1b[?62;22c", "kitty"),
        (b"\x1b[>4;2m\x1b[?64;1c", "modifyOtherKeys"),
        (b"\x1b[?1;2c", "legacy"),
    ],
)
def test_the_answers_name_the_encoding(answer: bytes, expected: str) -> None:
    encoding, replies, elapsed, sent = _run(answer)
    assert sent == QUERY
    assert (encoding, replies) == (expected, answer)
    assert elapsed < 1.5  # the DA1 answer ends the wait


def test_a_silent_terminal_is_legacy_after_the_timeout() -> None:
    encoding, replies, elapsed, _ = _run(None, timeout=0.3)
    assert (encoding, replies) == ("legacy", b"")
    assert 0.25 < elapsed < 2
