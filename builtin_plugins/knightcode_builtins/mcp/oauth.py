"""OAuth for streamable-HTTP servers, through the SDK's ``OAuthClientProvider``.

``knightcode mcp login NAME`` runs the authorization-code flow with PKCE (discovery, dynamic
client registration, the browser step with a redirect listener on 127.0.0.1, the token
exchange) and keeps the client registration and tokens in
``<agent-dir>/mcp/oauth/<name>.json`` (mode 0600, in a 0700 folder; never logged, never in a
session file or the event stream). A session's connection to that server then sends the token
and refreshes it when it expires; when a full login is needed again (no tokens, refresh
refused) the server is reported with "run 'knightcode mcp login NAME'" — a session never opens
a browser. ``knightcode mcp logout NAME`` deletes the file.

The SDK is imported inside the functions: this module is loaded only for an HTTP server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import sys
import time
import webbrowser
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

    from .config import ServerConfig

__all__ = [
    "LoginRequired",
    "TokenFile",
    "callback_listener",
    "client_provider",
    "describe_failure",
    "has_login",
    "login_hint",
    "logout",
    "quiet_sdk_logs",
    "token_path",
]

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


class LoginRequired(Exception):
    """The server asked for authorization that only ``knightcode mcp login`` can get."""


def quiet_sdk_logs() -> None:
    """The SDK logs failed flows with tracebacks; with no handler configured Python would print
    them on stderr (over the UI). Our own messages say what went wrong instead.
    """
    logger = logging.getLogger("mcp")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


def describe_failure(error: BaseException) -> str:
    """A failed login as one line: our own message, or the innermost SDK error."""
    from .manager import describe_error, innermost

    inner = innermost(error)
    return str(inner) if isinstance(inner, LoginRequired) else describe_error(inner)


def token_path(agent_dir: Path, name: str) -> Path:
    """``<agent-dir>/mcp/oauth/<name>.json`` (the name made safe for a file name)."""
    return agent_dir / "mcp" / "oauth" / f"{_SAFE.sub('_', name)}.json"


def login_hint(name: str) -> str:
    """The one line that tells the user what to do about a server that wants a login."""
    return f"the server requires authorization: run 'knightcode mcp login {name}'"


class TokenFile:
    """The SDK's ``TokenStorage`` over one file, bound to the server's URL: a login for another
    URL (mcp.json changed) counts as none.
    """

    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        self.url = url

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("url") != self.url:
            return {}
        return data

    def _write(self, key: str, value: object | None) -> None:
        data = self._read()
        data["url"] = self.url
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
        _write_private(self.path, data)

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, or None."""
        from mcp.shared.auth import OAuthToken

        raw = self._read().get("tokens")
        return OAuthToken.model_validate(raw) if isinstance(raw, dict) else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Keep new tokens (after a login or a refresh), with when the access token expires."""
        self._write("tokens", tokens.model_dump(mode="json", exclude_none=True))
        expires = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self._write("expiresAt", expires)

    def expires_at(self) -> float | None:
        """When the stored access token expires (seconds since the epoch), if it said."""
        value = self._read().get("expiresAt")
        return float(value) if isinstance(value, int | float) else None

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The stored client registration, or None."""
        from mcp.shared.auth import OAuthClientInformationFull

        raw = self._read().get("client")
        return OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep the client registration (dynamic registration at login)."""
        self._write("client", client_info.model_dump(mode="json", exclude_none=True))

    def forget(self) -> None:
        """Start afresh: the next login registers again (its redirect port is a new one)."""
        self.path.unlink(missing_ok=True)

    def redirect_uris(self) -> list[str]:
        """The redirect URIs the stored registration was made with."""
        client = self._read().get("client")
        uris = client.get("redirect_uris") if isinstance(client, dict) else None
        return [str(u) for u in uris] if isinstance(uris, list) else []


def _write_private(path: Path, data: dict[str, object]) -> None:
    """Atomically, readable by the user only (the folder too)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(tmp, path)


def has_login(agent_dir: Path, cfg: ServerConfig) -> bool:
    """Whether tokens are stored for this server (at its current URL)."""
    assert cfg.url is not None
    return bool(TokenFile(token_path(agent_dir, cfg.name), cfg.url)._read().get("tokens"))


def logout(agent_dir: Path, name: str) -> bool:
    """Forget the server's tokens and registration; whether there were any."""
    path = token_path(agent_dir, name)
    existed = path.exists()
    path.unlink(missing_ok=True)
    return existed


def client_provider(
    agent_dir: Path,
    cfg: ServerConfig,
    *,
    redirect_uri: str | None = None,
    redirect_handler: Callable[[str], Awaitable[None]] | None = None,
    callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None,
) -> OAuthClientProvider:
    """The SDK's auth for ``cfg``'s HTTP client, over its token file.

    Without handlers (a session) it sends and refreshes the stored token, and a needed login
    fails (see :class:`LoginRequired`); ``knightcode mcp login`` gives them.
    """
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    assert cfg.url is not None
    storage = TokenFile(token_path(agent_dir, cfg.name), cfg.url)
    uris = [redirect_uri] if redirect_uri else storage.redirect_uris() or ["http://127.0.0.1/"]
    metadata = OAuthClientMetadata(
        client_name="knightcode",
        redirect_uris=[AnyUrl(u) for u in uris],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )

    class Provider(OAuthClientProvider):
        """The SDK's provider, which also knows when a stored token expires: the SDK learns it
        only from a token response, so after a restart it would send an expired token and,
        on the 401, ask for a new login instead of refreshing.
        """

        async def _initialize(self) -> None:
            await super()._initialize()
            self.context.token_expiry_time = storage.expires_at()

    return Provider(
        cfg.url,
        metadata,
        storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )


_PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"knightcode: authorization received; you can close this window.\n"
)


@contextlib.asynccontextmanager
async def callback_listener() -> AsyncIterator[tuple[str, asyncio.Future[dict[str, str]]]]:
    """A one-shot redirect listener on 127.0.0.1 (a free port): yields its redirect URI and a
    future with the query parameters of the first request to it.
    """
    loop = asyncio.get_running_loop()
    got: asyncio.Future[dict[str, str]] = loop.create_future()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            parts = line.decode("latin-1").split()
            if len(parts) >= 2 and not got.done():
                query = parse_qs(urlsplit(parts[1]).query)
                got.set_result({k: v[0] for k, v in query.items() if v})
            writer.write(_PAGE)
            await writer.drain()
        except (OSError, TimeoutError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/callback", got
    finally:
        server.close()
        await server.wait_closed()


def _open_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser when there is one (never a terminal browser, which
    would take over the terminal the URL is printed in).
    """
    graphical = sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )
    if not graphical:
        return False
    with contextlib.suppress(webbrowser.Error):
        return webbrowser.open(url)
    return False


async def login(
    agent_dir: Path,
    cfg: ServerConfig,
    *,
    say: Callable[[str], None],
    open_browser: bool = True,
    timeout: float = 300.0,
) -> list[str]:
    """The authorization-code flow for ``cfg``; the tokens are stored; returns the server's
    tool names. The login is proved by listing them, and the list is cached so that the next
    session offers them at once.

    :param say: prints a line for the user (the URL to open)
    :raises LoginRequired: the flow failed or no answer came within ``timeout``
    """
    assert cfg.url is not None
    quiet_sdk_logs()
    store = TokenFile(token_path(agent_dir, cfg.name), cfg.url)
    store.forget()
    try:
        return await _flow(agent_dir, cfg, say, open_browser, timeout)
    except BaseException:
        store.forget()  # no half login (a registration without tokens) is left behind
        raise


async def _flow(
    agent_dir: Path,
    cfg: ServerConfig,
    say: Callable[[str], None],
    open_browser: bool,
    timeout: float,
) -> list[str]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult

    assert cfg.url is not None
    async with callback_listener() as (redirect_uri, got):

        async def redirect(url: str) -> None:
            say(f"Open this URL to authorize knightcode for '{cfg.name}':\n{url}")
            if open_browser and _open_browser(url):
                say("(opened in your browser)")

        async def callback() -> AuthorizationCodeResult:
            try:
                params = await asyncio.wait_for(asyncio.shield(got), timeout)
            except TimeoutError:
                raise LoginRequired(f"no authorization within {timeout:g} s") from None
            if "error" in params:
                raise LoginRequired(f"authorization refused: {params['error']}")
            return AuthorizationCodeResult(
                code=params.get("code", ""), state=params.get("state"), iss=params.get("iss")
            )

        auth = client_provider(
            agent_dir,
            cfg,
            redirect_uri=redirect_uri,
            redirect_handler=redirect,
            callback_handler=callback,
        )
        client = httpx2.AsyncClient(headers=dict(cfg.headers), timeout=cfg.timeout, auth=auth)
        async with (
            client,
            streamable_http_client(cfg.url, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
    from .manager import ToolSpec
    from .runtime import cache_path
    from .tools import write_cache

    specs = [ToolSpec(t.name, t.description or "", dict(t.input_schema)) for t in listed.tools]
    write_cache(cache_path(agent_dir), [(cfg, specs)])
    return [spec.name for spec in specs]
