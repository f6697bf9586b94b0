"""OpenAI ChatGPT Plus/Pro (Codex): authorization code with PKCE, the Codex CLI's client.

The browser is redirected to a callback server on ``localhost:1455`` (the port the client is
registered with); when it is taken or unreachable the user pastes the redirect URL. The ChatGPT
account id, which the Codex backend wants in a header, is read from the access token's claims.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from collections.abc import Mapping
from urllib.parse import urlencode

from knightcode._auth.credentials import OAuthCredentials, now_ms
from knightcode._auth.endpoints import callback_port, endpoint
from knightcode._auth.flow import (
    LOGIN_TIMEOUT_SECONDS,
    CallbackServer,
    LoginError,
    LoginIO,
    Pkce,
    post_form,
    token_fields,
    wait_for_code,
)

__all__ = ["account_id", "login", "refresh"]

CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
AUTHORIZE_URL = "https://auth.openai.com/oauth/authorize"
TOKEN_URL = "https://auth.openai.com/oauth/token"
PORT = 1455
CALLBACK_PATH = "/auth/callback"
SCOPE = "openid profile email offline_access"
AUTH_CLAIM = "https://api.openai.com/auth"


def account_id(access_token: str) -> str | None:
    """The ChatGPT account id in a Codex access token (a JWT), or None."""
    parts = access_token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        claims = json.loads(payload)
    except (binascii.Error, ValueError):
        return None
    auth = claims.get(AUTH_CLAIM) if isinstance(claims, dict) else None
    found = auth.get("chatgpt_account_id") if isinstance(auth, dict) else None
    return found if isinstance(found, str) and found else None


async def login(io: LoginIO, *, timeout: float = LOGIN_TIMEOUT_SECONDS) -> OAuthCredentials:
    """Run the login; the new credentials (not yet stored).

    :raises LoginError: the flow failed (LoginCancelled: the user cancelled)
    """
    pkce = Pkce.create()
    state = secrets.token_hex(16)
    server = CallbackServer(callback_port(PORT), CALLBACK_PATH, state)
    listening = await server.start()
    if not listening:
        server.port = PORT
        io.progress(f"Port {PORT} is in use: paste the redirect URL when the browser shows it.")
    try:
        query = urlencode(
            {
                "response_type": "code",
                "client_id": CLIENT_ID,
                "redirect_uri": server.redirect_uri,
                "scope": SCOPE,
                "code_challenge": pkce.challenge,
                "code_challenge_method": "S256",
                "state": state,
                "id_token_add_organizations": "true",
                "codex_cli_simplified_flow": "true",
                "originator": "codex_cli_rs",
            }
        )
        io.show(
            f"{endpoint(AUTHORIZE_URL)}?{query}",
            "Log in with your ChatGPT account in the browser.",
        )
        code, _ = await wait_for_code(server if listening else None, io, state, timeout=timeout)
        io.progress("Exchanging the authorization code for tokens…")
        what = "the OpenAI token exchange"
        data = await post_form(
            endpoint(TOKEN_URL),
            {
                "grant_type": "authorization_code",
                "client_id": CLIENT_ID,
                "code": code,
                "code_verifier": pkce.verifier,
                "redirect_uri": server.redirect_uri,
            },
            what,
        )
    finally:
        await server.close()
    return _credentials(data, what, {})


async def refresh(credentials: OAuthCredentials) -> OAuthCredentials:
    """New credentials from the refresh token. :raises LoginError: the refresh was refused."""
    what = "the OpenAI token refresh"
    data = await post_form(
        endpoint(TOKEN_URL),
        {
            "grant_type": "refresh_token",
            "refresh_token": credentials.refresh,
            "client_id": CLIENT_ID,
        },
        what,
    )
    return _credentials(data, what, credentials.extra)


def _credentials(
    data: Mapping[str, object], what: str, extra: Mapping[str, object]
) -> OAuthCredentials:
    access, refresh_token, expires_in = token_fields(data, what)
    account = account_id(access)
    if account is None:
        raise LoginError(f"{what} failed: the access token names no ChatGPT account")
    fields = {**extra, "accountId": account}
    return OAuthCredentials(refresh_token, access, now_ms() + expires_in * 1000, fields)
