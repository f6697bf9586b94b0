"""What the login flows share: the user-facing I/O, PKCE, the local callback server, and HTTP.

A flow talks to the user only through :class:`LoginIO`, so the same flow runs in the terminal
UI (dialogs, Escape cancels) and in ``knightcode login`` (stdout and stdin). Errors are
:class:`LoginError` with a message for the user; no message ever contains a token.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import parse_qs, urlsplit

import httpx

from knightcode._auth.errors import LoginCancelled, LoginError

__all__ = [
    "CallbackServer",
    "LoginCancelled",
    "LoginError",
    "LoginIO",
    "Pkce",
    "parse_authorization_input",
    "post_form",
    "post_json",
    "wait_for_code",
]

HTTP_TIMEOUT_SECONDS = 30.0
LOGIN_TIMEOUT_SECONDS = 300.0

SUCCESS_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>Logged in</title></head>"
    "<body><p>Login successful. Return to your terminal.</p></body></html>"
)


class LoginIO(Protocol):
    """How a flow reaches the user."""

    def show(self, url: str, instructions: str) -> None:
        """Show the URL to open (and try to open it), with what to do there."""

    def progress(self, message: str) -> None:
        """A step of the flow, e.g. "Exchanging the code for tokens…"."""

    async def prompt(self, message: str, placeholder: str = "") -> str | None:
        """Ask for a line of text. None: the user cancelled; "": nothing will come (no
        terminal), so the flow keeps waiting for its callback instead.
        """


@dataclass(frozen=True)
class Pkce:
    """A PKCE pair (RFC 7636, method S256)."""

    verifier: str
    challenge: str

    @classmethod
    def create(cls) -> Pkce:
        """A fresh random verifier and its challenge."""
        verifier = _b64url(secrets.token_bytes(32))
        return cls(verifier, _b64url(hashlib.sha256(verifier.encode("ascii")).digest()))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def parse_authorization_input(text: str) -> tuple[str | None, str | None]:
    """``(code, state)`` from what the user pasted: the redirect URL, ``code#state``, a query
    string, or the bare code.
    """
    value = text.strip()
    if not value:
        return None, None
    if "://" in value:
        query = parse_qs(urlsplit(value).query)
        return _first(query, "code"), _first(query, "state")
    if "#" in value:
        code, _, state = value.partition("#")
        return code or None, state or None
    if "code=" in value:
        query = parse_qs(value)
        return _first(query, "code"), _first(query, "state")
    return value, None


def _first(query: Mapping[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0] if values else None


class CallbackServer:
    """A one-shot HTTP server on 127.0.0.1 that receives the provider's redirect.

    :param port: the port to listen on (0: any free one)
    :param path: the callback path, e.g. ``/auth/callback``
    :param state: the expected ``state``; a redirect with another one is refused
    """

    def __init__(self, port: int, path: str, state: str) -> None:
        self.port = port
        self.path = path
        self.state = state
        self.code: asyncio.Future[str] | None = None
        self._server: asyncio.Server | None = None

    async def start(self) -> bool:
        """Listen; False when the port is taken (the flow then relies on pasting)."""
        self.code = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        except OSError:
            return False
        self.port = self._server.sockets[0].getsockname()[1]
        return True

    @property
    def redirect_uri(self) -> str:
        """The redirect URI naming this server (``localhost``, as the providers register it)."""
        return f"http://localhost:{self.port}{self.path}"

    async def close(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            status, body = self._answer(request_line.decode("latin-1"))
        except (TimeoutError, OSError, UnicodeError):
            status, body = 400, "Bad request"
        payload = body.encode()
        kind = "text/html" if status == 200 else "text/plain"
        head = (
            f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
            f"Content-Type: {kind}; charset=utf-8\r\nContent-Length: {len(payload)}\r\n"
            "Connection: close\r\n\r\n"
        )
        with contextlib.suppress(OSError):
            writer.write(head.encode() + payload)
            await writer.drain()
            writer.close()

    def _answer(self, request_line: str) -> tuple[int, str]:
        parts = request_line.split()
        if len(parts) < 2:
            return 400, "Bad request"
        url = urlsplit(parts[1])
        if url.path != self.path:
            return 404, "Not found"
        query = parse_qs(url.query)
        if error := _first(query, "error"):
            # The user denied access (or the provider failed): end the wait, do not time out.
            pending = self.code is not None and not self.code.done()
            if pending and self.code is not None and _first(query, "state") == self.state:
                self.code.set_exception(LoginError(f"the provider refused: {error[:100]}"))
            return 400, f"Login failed: {error}"
        code, state = _first(query, "code"), _first(query, "state")
        if not code:
            return 400, "Missing authorization code"
        if state != self.state:
            return 400, "State mismatch"
        if self.code is not None and not self.code.done():
            self.code.set_result(code)
        return 200, SUCCESS_PAGE


async def wait_for_code(
    server: CallbackServer | None,
    io: LoginIO,
    state: str,
    *,
    timeout: float = LOGIN_TIMEOUT_SECONDS,
) -> tuple[str, bool]:
    """The authorization code: from the callback server or pasted by the user, whichever
    comes first.

    :returns: ``(code, pasted)``; a pasted code was exchanged with the redirect URI as the
        provider registered it, which the caller needs to know
    :raises LoginCancelled: the user cancelled the paste prompt
    :raises LoginError: a pasted ``state`` does not match, or nothing came within ``timeout``
    """
    prompt = asyncio.ensure_future(
        io.prompt("Paste the redirect URL (or the code) if the browser cannot reach this machine")
    )
    waiters: set[asyncio.Future[str] | asyncio.Future[str | None]] = {prompt}
    if server is not None and server.code is not None:
        waiters.add(server.code)
    try:
        async with asyncio.timeout(timeout):
            while True:
                done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                if server is not None and server.code in done:
                    return server.code.result(), False
                pasted = prompt.result()
                if pasted is None:
                    raise LoginCancelled("login cancelled")
                code, pasted_state = parse_authorization_input(pasted)
                if code:
                    if pasted_state is not None and pasted_state != state:
                        raise LoginError("the pasted URL belongs to another login (state mismatch)")
                    return code, True
                waiters.discard(prompt)  # no terminal to paste into: wait for the callback only
                if len(waiters) == 0:
                    raise LoginError("no authorization code: the callback server is not running")
    except TimeoutError:
        raise LoginError(f"no authorization arrived within {timeout:g} s") from None
    finally:
        prompt.cancel()


def _describe(response: httpx.Response) -> str:
    """The status and the OAuth error of a failed response (never the body's other fields)."""
    detail = ""
    with contextlib.suppress(ValueError):
        data = response.json()
        if isinstance(data, dict):
            error = data.get("error")
            if isinstance(error, dict):
                error = error.get("message") or error.get("type")
            description = data.get("error_description")
            detail = ": ".join(str(part) for part in (error, description) if part)
    return f"HTTP {response.status_code}" + (f" ({detail})" if detail else "")


async def _send(request: httpx.Request, what: str) -> dict[str, object]:
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT_SECONDS) as client:
        try:
            response = await client.send(request)
        except httpx.HTTPError as exc:
            raise LoginError(f"{what} failed: {type(exc).__name__}: {exc}") from None
    if response.status_code >= 400:
        raise LoginError(f"{what} failed: {_describe(response)}")
    try:
        data = response.json()
    except (ValueError, json.JSONDecodeError):
        raise LoginError(f"{what} failed: the answer is not JSON") from None
    if not isinstance(data, dict):
        raise LoginError(f"{what} failed: the answer is not a JSON object")
    return data


async def post_json(url: str, body: Mapping[str, object], what: str) -> dict[str, object]:
    """POST a JSON body; the JSON object answered. :raises LoginError: on any failure."""
    headers = {"Accept": "application/json"}
    return await _send(httpx.Request("POST", url, json=dict(body), headers=headers), what)


async def post_form(
    url: str, form: Mapping[str, str], what: str, headers: Mapping[str, str] | None = None
) -> dict[str, object]:
    """POST a form; the JSON object answered. :raises LoginError: on any failure."""
    all_headers = {"Accept": "application/json", **(headers or {})}
    return await _send(httpx.Request("POST", url, data=dict(form), headers=all_headers), what)


async def get_json(url: str, headers: Mapping[str, str], what: str) -> dict[str, object]:
    """GET a JSON object. :raises LoginError: on any failure."""
    return await _send(httpx.Request("GET", url, headers=dict(headers)), what)


def token_fields(data: Mapping[str, object], what: str) -> tuple[str, str, int]:
    """``(access, refresh, expires_in seconds)`` of a token answer.

    :raises LoginError: a field is missing
    """
    access, refresh, expires_in = (
        data.get("access_token"),
        data.get("refresh_token"),
        data.get("expires_in"),
    )
    if not isinstance(access, str) or not access or not isinstance(refresh, str) or not refresh:
        raise LoginError(f"{what} failed: the answer has no access and refresh token")
    if not isinstance(expires_in, int | float):
        raise LoginError(f"{what} failed: the answer has no expires_in")
    return access, refresh, int(expires_in)
