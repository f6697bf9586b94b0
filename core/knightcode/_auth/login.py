"""Running a subscription login and storing its result: the one entry point for ``/login`` and
``knightcode login``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import webbrowser
from collections.abc import Sequence

from knightcode._auth import anthropic, codex, copilot
from knightcode._auth.credentials import OAuthCredentials
from knightcode._auth.flow import LoginIO
from knightcode._auth.providers import OAUTH_PROVIDERS
from knightcode._auth.tokens import OAuthTokens

__all__ = ["can_open_browser", "log_in", "open_browser"]


async def log_in(
    tokens: OAuthTokens,
    provider: str,
    io: LoginIO,
    *,
    enterprise: str | None = None,
    model_ids: Sequence[str] = (),
) -> OAuthCredentials:
    """Run ``provider``'s login and store the credentials in auth.json (0600).

    :param enterprise: GitHub Enterprise host (``github-copilot`` only)
    :param model_ids: the provider's known models (Copilot enables them for the account)
    :raises LoginError: the login failed or was cancelled; nothing is stored then
    :raises KeyError: ``provider`` has no subscription login
    """
    if provider not in OAUTH_PROVIDERS:
        raise KeyError(provider)
    if provider == "anthropic":
        credentials = await anthropic.login(io)
    elif provider == "openai-codex":
        credentials = await codex.login(io)
    else:
        credentials = await copilot.login(io, enterprise=enterprise, model_ids=model_ids)
    tokens.save(provider, credentials)
    return credentials


def can_open_browser() -> bool:
    """Whether a graphical browser can be expected (a console browser would take the
    terminal over).
    """
    return sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def open_browser(url: str) -> None:
    """Open ``url`` in the browser when there is one; the URL is always shown as well."""
    if can_open_browser():
        with contextlib.suppress(webbrowser.Error):
            webbrowser.open(url)
