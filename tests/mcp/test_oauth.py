"""OAuth for streamable-HTTP servers, end to end against a real authorization server on
127.0.0.1 (``auth_server.py``: the SDK's ``mcp.server.auth`` with an in-memory provider that
approves every request): ``knightcode mcp login`` runs the authorization-code flow (the test
plays the browser: an HTTP GET of the printed URL, following the redirects to knightcode's
listener), the tokens land in a 0600 file, the model then calls the server's tool, the token
is nowhere else on disk or in the event stream, and after ``logout`` the server is reported
with the login hint.
"""

from __future__ import annotations

import asyncio
import json
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx2

from knightcode.testing import text_reply, tool_call, tool_call_reply
from knightcode_builtins.mcp.oauth import TokenFile, token_path
from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)

from .conftest import auth_server, short_auth_server, write_mcp_json  # noqa: F401 (the fixtures)


def _mcp(s: Scripted, *args: str) -> subprocess.CompletedProcess[str]:
    """``knightcode mcp ARGS`` in the project."""
    command = [sys.executable, "-m", "knightcode", "mcp", *args]
    return subprocess.run(
        command, cwd=s.project, env=s.env(), capture_output=True, text=True, check=False
    )


def _login(s: Scripted, name: str, *, browse: bool, timeout: float = 30) -> tuple[int, str, str]:
    """``knightcode mcp login NAME --no-browser``; with ``browse`` the test opens the URL."""
    command = [sys.executable, "-m", "knightcode", "mcp", "login", name, "--no-browser"]
    process = subprocess.Popen(
        [*command, "--timeout", str(timeout)],
        cwd=s.project,
        env=s.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None and process.stdout is not None
    said: list[str] = []
    for line in process.stderr:
        said.append(line)
        if browse and line.startswith("http"):
            page = httpx2.get(line.strip(), follow_redirects=True, timeout=10)
            assert page.status_code == 200 and "authorization received" in page.text
    out = process.stdout.read()
    return process.wait(30), out, "".join(said)


def test_login_then_the_model_calls_the_tool_then_logout(
    scripted: Scripted,  # noqa: F811
    auth_server: str,  # noqa: F811
) -> None:
    write_mcp_json(scripted.agent_dir, {"remote": {"url": auth_server}})
    code, out, err = _login(scripted, "remote", browse=True)
    assert code == 0, err
    assert out.strip() == "logged in to 'remote' (1 tools)"
    path = token_path(scripted.agent_dir, "remote")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    token = json.loads(path.read_text())["tokens"]["access_token"]
    assert token and token not in err + out

    scripted.server.add(
        tool_call_reply([tool_call("c1", "mcp__remote__add", {"a": 20, "b": 22})]),
        text_reply("42."),
    )
    records, result = scripted.run_json("Add with the remote server")
    assert result.returncode == 0, result.stderr
    (end,) = [r for r in records if r["type"] == "tool_execution_end"]
    assert end["isError"] is False and end["result"]["content"][0]["text"] == "42"
    # The token is in its file and nowhere else: not the session, the logs, the output.
    assert token not in result.stdout + result.stderr
    for file in scripted.agent_dir.rglob("*"):
        if file.is_file() and file != path:
            assert token.encode() not in file.read_bytes(), file

    done = _mcp(scripted, "logout", "remote")
    assert done.stdout.strip() == "logged out of 'remote'" and not path.exists()
    (row,) = json.loads(_mcp(scripted, "list", "--json").stdout)
    assert row["status"] == "failed"
    assert row["error"].endswith("run 'knightcode mcp login remote'")


def test_an_expired_token_is_refreshed_by_the_session(
    scripted: Scripted,  # noqa: F811
    short_auth_server: str,  # noqa: F811
) -> None:
    write_mcp_json(scripted.agent_dir, {"remote": {"url": short_auth_server}})
    code, _out, err = _login(scripted, "remote", browse=True)
    assert code == 0, err
    path = token_path(scripted.agent_dir, "remote")
    first = json.loads(path.read_text())["tokens"]["access_token"]
    time.sleep(2.5)  # the access token has expired; the refresh token has not
    scripted.server.add(
        tool_call_reply([tool_call("c1", "mcp__remote__add", {"a": 1, "b": 2})]),
        text_reply("3."),
    )
    records, result = scripted.run_json("Add")
    assert result.returncode == 0, result.stderr
    (end,) = [r for r in records if r["type"] == "tool_execution_end"]
    assert end["isError"] is False, end
    assert end["result"]["content"][0]["text"] == "3"
    assert json.loads(path.read_text())["tokens"]["access_token"] != first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_401_without_login_gives_the_hint_in_a_session(
    scripted: Scripted,  # noqa: F811
    auth_server: str,  # noqa: F811
) -> None:
    write_mcp_json(scripted.agent_dir, {"remote": {"url": auth_server}})
    scripted.server.add(text_reply("Hi."))
    records, result = scripted.run_json("Hello")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    warnings = [r for r in records if r.get("type") == "notice" or "mcp:" in json.dumps(r)]
    text = json.dumps(warnings) + result.stderr
    assert "run 'knightcode mcp login remote'" in text


def test_a_login_nobody_completes_times_out_cleanly(
    scripted: Scripted,  # noqa: F811
    auth_server: str,  # noqa: F811
) -> None:
    write_mcp_json(scripted.agent_dir, {"remote": {"url": auth_server}})
    code, out, err = _login(scripted, "remote", browse=False, timeout=1)
    assert code == 1 and out == ""
    assert "login to 'remote' failed: no authorization within 1 s" in err
    assert "Traceback" not in err
    assert not TokenFile(token_path(scripted.agent_dir, "remote"), auth_server)._read()


def test_login_refuses_unknown_and_stdio_servers(scripted: Scripted) -> None:  # noqa: F811
    write_mcp_json(scripted.agent_dir, {"local": {"command": "true"}})
    for name, why in (("nope", "no MCP server named 'nope'"), ("local", "is a stdio server")):
        code, _out, err = _login(scripted, name, browse=False)
        assert code == 1 and why in err and "Traceback" not in err


def test_token_file_round_trip_is_bound_to_the_url(tmp_path: Path) -> None:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

    path = token_path(tmp_path, "a/b")
    assert path.name == "a_b.json"
    store = TokenFile(path, "https://one.example/mcp")

    async def round_trip() -> None:
        assert await store.get_tokens() is None
        await store.set_tokens(OAuthToken(access_token="t1", refresh_token="r1", expires_in=60))
        await store.set_client_info(
            OAuthClientInformationFull(client_id="c1", redirect_uris=["http://127.0.0.1:5/cb"])
        )
        tokens, client = await store.get_tokens(), await store.get_client_info()
        assert tokens is not None and tokens.access_token == "t1"
        assert client is not None and client.client_id == "c1"
        assert store.redirect_uris() == ["http://127.0.0.1:5/cb"]
        # Another URL (mcp.json changed): no login.
        assert await TokenFile(path, "https://two.example/mcp").get_tokens() is None

    asyncio.run(round_trip())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
