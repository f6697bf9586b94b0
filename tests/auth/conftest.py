"""Fixtures for the subscription login tests: the fake authorization server, and the agent
dir's auth.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.auth.fake_oauth import FakeAuthServer


@pytest.fixture
def fake_auth(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    """A running fake authorization server, with ``KNIGHTCODE_OAUTH_TEST_BASE`` pointing at it
    (in this process and in the subprocesses the test starts)."""
    with FakeAuthServer() as fake:
        monkeypatch.setenv("KNIGHTCODE_OAUTH_TEST_BASE", fake.base)
        monkeypatch.delenv("DISPLAY", raising=False)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        yield fake


def read_auth(agent_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((agent_dir / "auth.json").read_text())
    return data


def write_oauth(agent_dir: Path, provider: str, **entry: Any) -> None:
    path = agent_dir / "auth.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[provider] = {"type": "oauth", **entry}
    path.write_text(json.dumps(data))
    path.chmod(0o600)


def now_ms() -> int:
    return int(time.time() * 1000)


def start_login(*args: str) -> subprocess.Popen[str]:
    """``knightcode login ARGS`` with stdin kept open (nothing pasted unless the test writes)."""
    return subprocess.Popen(
        [sys.executable, "-m", "knightcode", "login", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )


def read_until(process: subprocess.Popen[str], marker: str, timeout: float = 20) -> str:
    """stderr lines until one contains ``marker``; that line."""
    assert process.stderr is not None
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        seen.append(line)
        if marker in line:
            return line.strip()
    raise AssertionError(f"no {marker!r} in stderr: {''.join(seen)}")
