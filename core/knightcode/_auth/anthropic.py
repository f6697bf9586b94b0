"""Anthropic Claude Pro/Max: authorization code with PKCE, the reference's client and scopes.

The browser is redirected to a callback server on ``localhost:53692``; when it cannot reach this
machine the user pastes the final redirect URL (or ``code#state``) instead. Anthropic wants the
token request to repeat the authorization's ``state`` and ``redirect_uri``.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from urllib.parse import urlencode

from knightcode._auth.credentials import OAuthCredentials, now_ms
from knightcode._auth.endpoints import callback_port, endpoint
from knightcode._auth.flow import (
    LOGIN_TIMEOUT_SECONDS,
    CallbackServer,
    LoginIO,
    Pkce,
    post_json,
    token_fields,
    wait_for_code,
)

__all__ = ["login", "refresh"]

# The public client id of Claude Code, which the reference also uses (stored encoded there too).
CLIENT_ID = base64.b64decode("OWQxYzI1MGEtZTYxYi00NGQ5LTg4ZWQtNTk0NGQxOTYyZjVl").decode()
AUTHORIZE_URL = "https://claude.ai/oauth/authorize"
TOKEN_URL = "https://platform.claude.com/v1/oauth/token"
PORT = 53692
CALLBACK_PATH = "/callback"
SCOPES = (
    "org:create_api_key user:profile user:inference user:sessions:claude_code "
    "user:mcp_servers user:file_upload"
)
#: Anthropic's expiry, shortened as the reference does, so a refresh comes early.
EXPIRY_SLACK_MS = 5 * 60 * 1000


async def login(io: LoginIO, *, timeout: float = LOGIN_TIMEOUT_SECONDS) -> OAuthCredentials:
    """Run the login; the new credentials (not yet stored).

    :raises LoginError: the flow failed (LoginCancelled: the user cancelled)
    """
    pkce = Pkce.create()
    state = pkce.verifier  # as the reference: the verifier doubles as the state
    server = CallbackServer(callback_port(PORT), CALLBACK_PATH, state)
    listening = await server.start()
    if not listening:
        server.port = PORT  # the registered redirect URI still names it; the user pastes
    try:
        query = urlencode(
            {
                "code": "true",
                "client_id": CLIENT_ID,
                "response_type": "code",
                "redirect_uri": server.redirect_uri,
                "scope": SCOPES,
                "code_challenge": pkce.challenge,
                "code_challenge_method": "S256",
                "state": state,
            }
        )
        io.show(
            f"{endpoint(AUTHORIZE_URL)}?{query}",
            "Log in with your Claude Pro/Max account in the browser. If the browser is on "
            "another machine, paste the final redirect URL here.",
        )
        code, _ = await wait_for_code(server if listening else None, io, state, timeout=timeout)
        io.progress("Exchanging the authorization code for tokens…")
        data = await post_json(
            endpoint(TOKEN_URL),
            {
                "grant_type": "authorization_code",
                "client_id": CLIENT_ID,
                "code": code,
                "state": state,
                "redirect_uri": server.redirect_uri,
                "code_verifier": pkce.verifier,
            },
            "the Anthropic token exchange",
        )
    finally:
        await server.close()
    return _credentials(data, "the Anthropic token exchange")


async def refresh(credentials: OAuthCredentials) -> OAuthCredentials:
    """New credentials from the refresh token. :raises LoginError: the refresh was refused."""
    what = "the Anthropic token refresh"
    data = await post_json(
        endpoint(TOKEN_URL),
        {
            "grant_type": "refresh_token",
            "client_id": CLIENT_ID,
            "refresh_token": credentials.refresh,
        },
        what,
    )
    return _credentials(data, what, credentials.extra)


def _credentials(
    data: Mapping[str, object], what: str, extra: Mapping[str, object] | None = None
) -> OAuthCredentials:
    access, refresh_token, expires_in = token_fields(data, what)
    expires = now_ms() + expires_in * 1000 - EXPIRY_SLACK_MS
    return OAuthCredentials(refresh_token, access, expires, dict(extra or {}))
