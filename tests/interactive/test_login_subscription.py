"""``/login`` in the real UI (tmux), against the fake authorization server. Copilot: the
device code is shown, the test types it "at GitHub", and the login is stored; Escape while
waiting cancels it. Anthropic: the test opens the URL shown, as the browser would."""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.agent.conftest import Scripted
from tests.auth.fake_oauth import FakeAuthServer
from tests.interactive.conftest import Launch, requires_tmux

pytestmark = requires_tmux


@pytest.fixture
def fake_auth(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthServer]:
    with FakeAuthServer() as fake:
        monkeypatch.setenv("KNIGHTCODE_OAUTH_TEST_BASE", fake.base)
        monkeypatch.delenv("DISPLAY", raising=False)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        yield fake


def test_copilot_login_in_the_ui(
    fake_auth: FakeAuthServer, scripted: Scripted, launch: Launch, agent_dir: Path
) -> None:
    ui = launch(width=140)
    ui.send_text("/login github-copilot")
    ui.send_keys("Enter")
    ui.wait_for("GitHub Enterprise URL")
    ui.send_keys("Enter")  # github.com
    ui.wait_for("Esc cancels")
    code = ui.wait_for(re.compile(r"Enter the code (ABCD-\d{4})")).group(1)
    httpx.get(f"{fake_auth.base}/github.com/login/device", params={"user_code": code})
    ui.wait_for("Logged in to GitHub Copilot", timeout=20)
    ui.wait_gone("Esc cancels")
    path = agent_dir / "auth.json"
    entry = json.loads(path.read_text())["github-copilot"]
    assert entry["type"] == "oauth" and str(entry["refresh"]).startswith("gho_fake")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert entry["refresh"] not in ui.capture()


def test_escape_cancels_the_login(
    fake_auth: FakeAuthServer, scripted: Scripted, launch: Launch, agent_dir: Path
) -> None:
    ui = launch(width=140)
    ui.send_text("/login github-copilot")
    ui.send_keys("Enter")
    ui.wait_for("GitHub Enterprise URL")
    ui.send_keys("Enter")
    ui.wait_for("Esc cancels")
    ui.send_keys("Escape")
    ui.wait_for("login cancelled")
    assert not (agent_dir / "auth.json").exists()


def test_anthropic_browser_login_in_the_ui(
    fake_auth: FakeAuthServer, scripted: Scripted, launch: Launch, agent_dir: Path
) -> None:
    """The URL is shown whole (its own lines); the browser's redirect reaches the callback
    server, the paste dialog goes away by itself, and the login is stored."""
    ui = launch(width=140, height=40)
    ui.send_text("/login anthropic")
    ui.send_keys("Enter")
    ui.wait_for("Paste the redirect URL")
    screen = ui.capture()
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("http://127.0.0.1"))
    url = ""
    for line in lines[start:]:
        if not line.strip() or line.lstrip().startswith("•"):
            break
        url += line.strip()
    page = httpx.get(url, follow_redirects=True, timeout=10)
    assert page.status_code == 200, url
    ui.wait_for("Logged in to Anthropic (Claude Pro/Max)", timeout=20)
    ui.wait_gone("Paste the redirect URL")
    entry = json.loads((agent_dir / "auth.json").read_text())["anthropic"]
    assert entry["type"] == "oauth" and str(entry["access"]).startswith("sk-ant-oat01-fake")
    assert entry["access"] not in ui.capture()
