"""GitHub Copilot: GitHub's device code flow, then an exchange for a short-lived Copilot token.

The user opens ``https://github.com/login/device`` (or their GitHub Enterprise host) and types
the code shown; meanwhile the flow polls for the GitHub token. That token is the ``refresh`` of
the stored credentials: it is exchanged again for a Copilot token whenever the last one (about
30 minutes) runs out. Requests go to the API host the Copilot token names (``proxy-ep``).
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
from collections.abc import Sequence
from urllib.parse import quote, urlsplit

import httpx

from knightcode._auth.credentials import OAuthCredentials
from knightcode._auth.endpoints import endpoint
from knightcode._auth.flow import (
    HTTP_TIMEOUT_SECONDS,
    LOGIN_TIMEOUT_SECONDS,
    LoginError,
    LoginIO,
    get_json,
    post_form,
)

__all__ = [
    "COPILOT_HEADERS",
    "api_base_url",
    "enable_models",
    "login",
    "normalize_domain",
    "refresh",
]

# The public client id of the Copilot editor integrations (stored encoded by the reference too).
CLIENT_ID = base64.b64decode("SXYxLmI1MDdhMDhjODdlY2ZlOTg=").decode()
#: Sent with the token exchange and with every model request, as the reference does.
COPILOT_HEADERS = {
    "User-Agent": "GitHubCopilotChat/0.35.0",
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}
DEFAULT_DOMAIN = "github.com"
EXPIRY_SLACK_MS = 5 * 60 * 1000
_POLL_MULTIPLIER = 1.2


def normalize_domain(text: str) -> str | None:
    """The host name of a GitHub Enterprise URL or domain; None for blank input.

    :raises LoginError: not a usable host name
    """
    value = text.strip()
    if not value:
        return None
    host = urlsplit(value if "://" in value else f"https://{value}").hostname
    if not host or not re.fullmatch(r"[a-z0-9.-]+", host):
        raise LoginError(f"not a GitHub Enterprise URL or domain: {value!r}")
    return host


def api_base_url(token: str, enterprise: str | None) -> str:
    """The Copilot API base URL: from the token's ``proxy-ep`` (``proxy.X`` → ``api.X``),
    else the enterprise's or the individual plan's.
    """
    found = re.search(r"(?:^|;)proxy-ep=([^;]+)", token)
    if found:
        url = "https://" + re.sub(r"^proxy\.", "api.", found.group(1))
    elif enterprise:
        url = f"https://copilot-api.{enterprise}"
    else:
        url = "https://api.individual.githubcopilot.com"
    return endpoint(url)


async def login(
    io: LoginIO,
    *,
    enterprise: str | None = None,
    model_ids: Sequence[str] = (),
    timeout: float = LOGIN_TIMEOUT_SECONDS,
) -> OAuthCredentials:
    """Run the device flow; the new credentials (not yet stored).

    :param enterprise: a GitHub Enterprise host (None: github.com)
    :param model_ids: the models to enable for the account (:func:`enable_models`)
    :raises LoginError: the flow failed or timed out
    """
    domain = enterprise or DEFAULT_DOMAIN
    device = await post_form(
        endpoint(f"https://{domain}/login/device/code"),
        {"client_id": CLIENT_ID, "scope": "read:user"},
        "the GitHub device code request",
        {"User-Agent": COPILOT_HEADERS["User-Agent"]},
    )
    device_code, user_code = device.get("device_code"), device.get("user_code")
    uri, interval = device.get("verification_uri"), device.get("interval")
    expires_in = device.get("expires_in")
    if not (isinstance(device_code, str) and isinstance(user_code, str) and isinstance(uri, str)):
        raise LoginError("the GitHub device code request failed: incomplete answer")
    seconds = float(interval) if isinstance(interval, int | float) else 5.0
    lifetime = float(expires_in) if isinstance(expires_in, int | float) else timeout
    io.show(uri, f"Enter the code {user_code} there and authorize GitHub Copilot.")
    github_token = await _poll(domain, device_code, seconds, min(lifetime, timeout))
    io.progress("Getting a Copilot token…")
    credentials = await _exchange(github_token, enterprise)
    io.progress("Enabling the Copilot models…")
    await enable_models(credentials, model_ids)
    return credentials


_ENABLE_CONCURRENCY = 4


async def enable_models(credentials: OAuthCredentials, model_ids: Sequence[str]) -> list[str]:
    """Accept each model's policy for the account, as the reference does after a login: some
    models (Claude, Grok) answer "model not supported" until then. Failures are ignored (the
    model may be enabled already, or not offered to this plan).

    :returns: the ids that were enabled
    """
    base = api_base_url(credentials.access, credentials.text("enterpriseUrl"))
    headers = {
        "Authorization": f"Bearer {credentials.access}",
        **COPILOT_HEADERS,
        "openai-intent": "chat-policy",
        "x-interaction-type": "chat-policy",
    }

    # A few at a time: two dozen simultaneous connections get refused by small servers (and
    # a refused one would silently leave that model disabled).
    gate = asyncio.Semaphore(_ENABLE_CONCURRENCY)

    async def enable(client: httpx.AsyncClient, model_id: str) -> bool:
        url = f"{base}/models/{quote(model_id, safe='')}/policy"
        async with gate:
            try:
                response = await client.post(url, json={"state": "enabled"}, headers=headers)
            except httpx.HTTPError:
                return False
        return response.is_success

    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT_SECONDS) as client:
        results = await asyncio.gather(*(enable(client, model_id) for model_id in model_ids))
    return [model_id for model_id, ok in zip(model_ids, results, strict=True) if ok]


async def _poll(domain: str, device_code: str, interval: float, lifetime: float) -> str:
    deadline = time.monotonic() + lifetime
    wait = max(1.0, interval)
    multiplier = _POLL_MULTIPLIER
    while time.monotonic() < deadline:
        await asyncio.sleep(min(wait * multiplier, max(0.0, deadline - time.monotonic())))
        answer = await post_form(
            endpoint(f"https://{domain}/login/oauth/access_token"),
            {
                "client_id": CLIENT_ID,
                "device_code": device_code,
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
            },
            "the GitHub token request",
            {"User-Agent": COPILOT_HEADERS["User-Agent"]},
        )
        token, error = answer.get("access_token"), answer.get("error")
        if isinstance(token, str) and token:
            return token
        if error == "authorization_pending":
            continue
        if error == "slow_down":
            new_interval = answer.get("interval")
            wait = float(new_interval) if isinstance(new_interval, int | float) else wait + 5
            multiplier = 1.4
            continue
        description = answer.get("error_description")
        detail = f"{error}: {description}" if description else str(error)
        raise LoginError(f"the GitHub device login failed: {detail}")
    raise LoginError("the GitHub device login timed out: the code was not entered in time")


async def refresh(credentials: OAuthCredentials) -> OAuthCredentials:
    """A new Copilot token for the stored GitHub token.

    :raises LoginError: GitHub refused (no Copilot subscription, the token was revoked)
    """
    return await _exchange(credentials.refresh, credentials.text("enterpriseUrl"))


async def _exchange(github_token: str, enterprise: str | None) -> OAuthCredentials:
    domain = enterprise or DEFAULT_DOMAIN
    data = await get_json(
        endpoint(f"https://api.{domain}/copilot_internal/v2/token"),
        {
            "Accept": "application/json",
            "Authorization": f"Bearer {github_token}",
            **COPILOT_HEADERS,
        },
        "the Copilot token request",
    )
    token, expires_at = data.get("token"), data.get("expires_at")
    if not isinstance(token, str) or not isinstance(expires_at, int | float):
        raise LoginError("the Copilot token request failed: incomplete answer")
    extra: dict[str, object] = {"enterpriseUrl": enterprise} if enterprise else {}
    return OAuthCredentials(github_token, token, int(expires_at * 1000) - EXPIRY_SLACK_MS, extra)
