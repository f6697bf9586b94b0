"""``knightcode login`` / ``logout`` against the fake authorization server: the test plays the
browser (it opens the printed URL and follows the redirect to knightcode's callback server)."""

from __future__ import annotations

import re
import stat
import subprocess
import sys
from pathlib import Path

import httpx

from tests.auth.conftest import read_auth, read_until, start_login
from tests.auth.fake_oauth import ACCOUNT_ID, FakeAuthServer


def _finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    return out, err


def _secrets(entry: dict[str, object]) -> list[str]:
    return [str(entry["access"]), str(entry["refresh"])]


def test_anthropic_login_through_the_callback(fake_auth: FakeAuthServer, agent_dir: Path) -> None:
    process = start_login("anthropic", "--no-browser")
    url = read_until(process, "/claude.ai/oauth/authorize")
    # The browser: the authorization page redirects to knightcode's callback server.
    page = httpx.get(url, follow_redirects=True, timeout=10)
    assert page.status_code == 200 and "Login successful" in page.text
    out, err = _finish(process)
    assert "logged in to Anthropic (Claude Pro/Max)" in out
    path = agent_dir / "auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    entry = read_auth(agent_dir)["anthropic"]
    assert entry["type"] == "oauth"
    assert str(entry["access"]).startswith("sk-ant-oat01-fake")
    assert str(entry["refresh"]).startswith("sk-ant-ort01-fake")
    assert isinstance(entry["expires"], int)
    for secret in _secrets(entry):
        assert secret not in out + err


def test_anthropic_login_with_a_pasted_code(fake_auth: FakeAuthServer, agent_dir: Path) -> None:
    process = start_login("anthropic", "--no-browser")
    url = read_until(process, "/claude.ai/oauth/authorize")
    # The browser is elsewhere: the user copies the code#state Anthropic shows and pastes it.
    redirect = httpx.get(url, follow_redirects=False, timeout=10).headers["location"]
    code = re.search(r"code=([^&]+)", redirect)
    state = re.search(r"state=([^&]+)", redirect)
    assert code and state
    assert process.stdin is not None
    process.stdin.write(f"{code.group(1)}#{state.group(1)}\n")
    process.stdin.flush()
    _finish(process)
    assert read_auth(agent_dir)["anthropic"]["type"] == "oauth"


def test_a_pasted_code_of_another_login_is_refused(
    fake_auth: FakeAuthServer, agent_dir: Path
) -> None:
    process = start_login("anthropic", "--no-browser")
    read_until(process, "/claude.ai/oauth/authorize")
    assert process.stdin is not None
    process.stdin.write("some-code#another-state\n")
    process.stdin.flush()
    _, err = process.communicate(timeout=30)
    assert process.returncode == 1
    assert "state mismatch" in err and "Traceback" not in err
    assert not (agent_dir / "auth.json").exists()


def test_codex_login_stores_the_account(fake_auth: FakeAuthServer, agent_dir: Path) -> None:
    process = start_login("openai-codex", "--no-browser")
    url = read_until(process, "/auth.openai.com/oauth/authorize")
    assert "codex_cli_simplified_flow=true" in url
    assert httpx.get(url, follow_redirects=True, timeout=10).status_code == 200
    out, err = _finish(process)
    entry = read_auth(agent_dir)["openai-codex"]
    assert entry["type"] == "oauth" and entry["accountId"] == ACCOUNT_ID
    for secret in _secrets(entry):
        assert secret not in out + err


def test_copilot_device_login(fake_auth: FakeAuthServer, agent_dir: Path) -> None:
    process = start_login("github-copilot")
    read_until(process, "/github.com/login/device")
    line = read_until(process, "Enter the code")
    user_code = re.search(r"ABCD-\d{4}", line)
    assert user_code
    # The user types the code at GitHub.
    httpx.get(f"{fake_auth.base}/github.com/login/device", params={"user_code": user_code[0]})
    out, err = _finish(process)
    entry = read_auth(agent_dir)["github-copilot"]
    assert str(entry["refresh"]).startswith("gho_fake")
    assert "proxy-ep=" in str(entry["access"])
    # The account's models were enabled, as the reference does after the login.
    assert "gpt-5.1" in fake_auth.enabled and "claude-sonnet-4.5" in fake_auth.enabled
    assert stat.S_IMODE((agent_dir / "auth.json").stat().st_mode) == 0o600
    for secret in _secrets(entry):
        assert secret not in out + err


def test_logout_removes_the_login(fake_auth: FakeAuthServer, agent_dir: Path) -> None:
    (agent_dir / "auth.json").write_text(
        '{"anthropic": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1},'
        ' "openai": {"type": "api_key", "key": "k"}}'
    )
    command = [sys.executable, "-m", "knightcode", "logout", "anthropic"]
    first = subprocess.run(command, capture_output=True, text=True, check=False)
    assert first.returncode == 0 and "logged out of anthropic" in first.stdout
    assert list(read_auth(agent_dir)) == ["openai"]
    second = subprocess.run(command, capture_output=True, text=True, check=False)
    assert "had no stored login" in second.stdout


def test_login_stores_an_api_key_from_stdin(agent_dir: Path) -> None:
    command = [sys.executable, "-m", "knightcode", "login", "openai"]
    result = subprocess.run(command, input="sk-test-123\n", capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert read_auth(agent_dir)["openai"] == {"type": "api_key", "key": "sk-test-123"}
    assert "sk-test-123" not in result.stdout + result.stderr


def test_unknown_provider_is_a_usage_error(agent_dir: Path) -> None:
    command = [sys.executable, "-m", "knightcode", "login", "nope"]
    result = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert "unknown provider 'nope'" in result.stderr and "Traceback" not in result.stderr
