"""The pieces of the login flows: parsing what the user pastes, the callback server, Copilot's
hosts, Codex's account claim, and auth.json entries surviving a refresh."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from knightcode._auth import codex, copilot
from knightcode._auth.credentials import OAuthCredentials
from knightcode._auth.flow import CallbackServer, LoginError, parse_authorization_input
from knightcode._auth.tokens import OAuthTokens
from knightcode._errors import ConfigError
from knightcode._llm.keys import AuthStorage
from tests.auth.conftest import now_ms, write_oauth
from tests.auth.fake_oauth import FakeAuthServer, jwt


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://localhost:1455/auth/callback?code=abc&state=xyz", ("abc", "xyz")),
        ("abc#xyz", ("abc", "xyz")),
        ("code=abc&state=xyz", ("abc", "xyz")),
        ("  abc  ", ("abc", None)),
        ("", (None, None)),
    ],
)
def test_pasted_input(text: str, expected: tuple[str | None, str | None]) -> None:
    assert parse_authorization_input(text) == expected


def test_callback_server_takes_only_its_own_state() -> None:
    async def scenario() -> tuple[int, int, str]:
        server = CallbackServer(0, "/callback", "good-state")
        assert await server.start()
        url = f"http://127.0.0.1:{server.port}/callback"
        async with httpx.AsyncClient() as client:
            wrong = await client.get(url, params={"code": "c1", "state": "other"})
            right = await client.get(url, params={"code": "c2", "state": "good-state"})
        assert server.code is not None
        code = await asyncio.wait_for(server.code, 5)
        await server.close()
        return wrong.status_code, right.status_code, code

    wrong, right, code = asyncio.run(scenario())
    assert (wrong, right, code) == (400, 200, "c2")


def test_copilot_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KNIGHTCODE_OAUTH_TEST_BASE", raising=False)
    token = "tid=1;exp=2;proxy-ep=proxy.business.githubcopilot.com;sku=x"
    assert copilot.api_base_url(token, None) == "https://api.business.githubcopilot.com"
    assert copilot.api_base_url("tid=1", "ghe.example.com") == "https://copilot-api.ghe.example.com"
    assert copilot.api_base_url("tid=1", None) == "https://api.individual.githubcopilot.com"
    assert copilot.normalize_domain("https://ghe.example.com/path") == "ghe.example.com"
    assert copilot.normalize_domain("  ") is None
    with pytest.raises(LoginError):
        copilot.normalize_domain("not a domain!")


def test_codex_account_claim() -> None:
    token = jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-9"}})
    assert codex.account_id(token) == "acct-9"
    assert codex.account_id("not-a-jwt") is None
    assert codex.account_id("a.!!!.c") is None


def test_unknown_fields_survive_a_round_trip() -> None:
    entry = {"type": "oauth", "refresh": "r", "access": "a", "expires": 5, "accountId": "x"}
    credentials = OAuthCredentials.from_entry(entry)
    assert credentials is not None and credentials.to_entry() == entry
    assert OAuthCredentials.from_entry({"type": "api_key", "key": "k"}) is None


def test_a_refresh_keeps_the_other_entries(fake_auth: FakeAuthServer, agent_dir: Path) -> None:
    path = agent_dir / "auth.json"
    path.write_text(json.dumps({"openai": {"type": "api_key", "key": "sk-1"}}))
    fake_auth.valid_refresh.add("sk-ant-ort01-a")
    write_oauth(
        agent_dir,
        "anthropic",
        access="sk-ant-oat01-a",
        refresh="sk-ant-ort01-a",
        expires=now_ms() - 1,
        extraField=[1, 2],
    )
    renewed = asyncio.run(OAuthTokens(AuthStorage(path)).fresh("anthropic"))
    data = json.loads(path.read_text())
    assert data["openai"] == {"type": "api_key", "key": "sk-1"}
    assert data["anthropic"]["access"] == renewed.access != "sk-ant-oat01-a"
    assert data["anthropic"]["extraField"] == [1, 2]


def test_a_refused_refresh_names_the_way_back(fake_auth: FakeAuthServer, agent_dir: Path) -> None:
    write_oauth(
        agent_dir, "github-copilot", access="tid=1", refresh="gho_revoked", expires=now_ms() - 1
    )
    tokens = OAuthTokens(AuthStorage(agent_dir / "auth.json"))
    with pytest.raises(ConfigError) as caught:
        asyncio.run(tokens.fresh("github-copilot"))
    message = str(caught.value)
    assert "log in again: /login github-copilot" in message
    assert "gho_revoked" not in message


def test_codex_requests_carry_the_account(agent_dir: Path) -> None:
    """The Codex client is RESP's (``openai-codex-responses``); what the login adds is the token
    and the account header, checked here on the request options."""
    from knightcode._auth.providers import apply_credentials
    from knightcode._llm.registry import ModelRegistry
    from knightcode._llm.types import StreamOptions

    registry = ModelRegistry(agent_dir)
    model = next(m for m in registry.models if m.provider == "openai-codex")
    assert model.api == "openai-codex-responses"
    assert model.base_url == "https://chatgpt.com/backend-api"
    credentials = OAuthCredentials("r", "tok", now_ms() + 60_000_000, {"accountId": "acct-7"})
    _, options = apply_credentials(model, StreamOptions(), credentials)
    assert options.api_key == "tok"
    assert options.headers["chatgpt-account-id"] == "acct-7"
    assert options.headers["OpenAI-Beta"] == "responses=experimental"


def test_a_login_makes_the_provider_available(agent_dir: Path) -> None:
    from knightcode._llm.registry import ModelRegistry

    registry = ModelRegistry(agent_dir, environ={})
    assert not registry.has_auth("github-copilot")
    write_oauth(agent_dir, "github-copilot", access="tid=1", refresh="gho", expires=1)
    assert registry.has_auth("github-copilot")
    assert any(m.provider == "github-copilot" for m in registry.available())


class _PasteIO:
    """A LoginIO whose user pastes ``answer`` (a test double for the terminal or the dialog)."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.shown: list[str] = []

    def show(self, url: str, instructions: str) -> None:
        self.shown.append(url)

    def progress(self, message: str) -> None:
        self.shown.append(message)

    async def prompt(self, message: str, placeholder: str = "") -> str | None:
        return self.answer


def test_a_taken_port_leaves_pasting() -> None:
    """When the callback port is taken (another login, another program), the code is pasted."""
    from knightcode._auth.flow import LoginCancelled, wait_for_code

    async def scenario() -> None:
        holder = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = holder.sockets[0].getsockname()[1]
        server = CallbackServer(port, "/callback", "s")
        assert not await server.start()
        assert await wait_for_code(None, _PasteIO("the-code#s"), "s") == ("the-code", True)
        with pytest.raises(LoginCancelled):
            await wait_for_code(None, _PasteIO(None), "s")
        with pytest.raises(LoginError, match="no authorization code"):
            await wait_for_code(None, _PasteIO(""), "s")
        holder.close()
        await holder.wait_closed()

    asyncio.run(scenario())


def test_a_refusal_at_the_provider_ends_the_wait() -> None:
    from knightcode._auth.flow import wait_for_code

    async def scenario() -> None:
        server = CallbackServer(0, "/callback", "s")
        assert await server.start()
        waiting = asyncio.ensure_future(wait_for_code(server, _PasteIO(""), "s", timeout=10))
        async with httpx.AsyncClient() as client:
            url = f"http://127.0.0.1:{server.port}/callback"
            await client.get(url, params={"error": "access_denied", "state": "s"})
        with pytest.raises(LoginError, match="the provider refused: access_denied"):
            await waiting
        await server.close()

    asyncio.run(scenario())
