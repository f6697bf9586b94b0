"""``/login`` for a subscription (Claude Pro/Max, ChatGPT/Codex, GitHub Copilot) in the UI.

The URL (and Copilot's code) is printed in the transcript, where it can be copied, and opened in
the browser when there is one. While the flow waits, a dialog is open: for a browser login it
takes a pasted redirect URL; for the device login it only waits. Escape in it cancels the login.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

from knightcode._auth.copilot import normalize_domain
from knightcode._auth.credentials import OAuthCredentials
from knightcode._auth.flow import LoginCancelled, LoginError
from knightcode._auth.login import log_in, open_browser
from knightcode._auth.providers import OAUTH_PROVIDERS

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp

__all__ = ["subscription_login"]


class _DialogIO:
    """:class:`~knightcode._auth.flow.LoginIO` on the transcript and the app's dialogs."""

    def __init__(self, app: KnightcodeApp) -> None:
        self.app = app

    def show(self, url: str, instructions: str) -> None:
        # The URL alone on its lines, as a terminal hyperlink: it wraps, and a click (or the
        # terminal's "copy link") still gets it whole.
        self.app.transcript.notice("Open this URL to log in:")
        self.app.transcript.add_renderable(Text(url, style=Style(link=url)))
        self.app.transcript.notice(instructions)
        open_browser(url)

    def progress(self, message: str) -> None:
        self.app.transcript.notice(message)

    async def prompt(self, message: str, placeholder: str = "") -> str | None:
        return await self.app.dialogs.input(f"{message} (Esc cancels)", "redirect URL or code")


async def subscription_login(app: KnightcodeApp, provider: str) -> bool:
    """Run ``provider``'s login and store it; False when it failed or was cancelled (the
    transcript says why).
    """
    registry = app.agent.model_registry
    if registry.oauth is None:
        app.transcript.notice("No auth.json is configured for this run", "error")
        return False
    spec = OAUTH_PROVIDERS[provider]
    enterprise: str | None = None
    try:
        if spec.kind == "device":
            answer = await app.dialogs.input(
                "GitHub Enterprise URL or domain (empty for github.com)", "company.ghe.com"
            )
            if answer is None:
                raise LoginCancelled("login cancelled")
            enterprise = normalize_domain(answer)
        flow = asyncio.ensure_future(
            log_in(
                registry.oauth,
                provider,
                _DialogIO(app),
                enterprise=enterprise,
                model_ids=[model.id for model in registry.models if model.provider == provider],
            )
        )
        if spec.kind == "device":
            await _wait_cancellable(app, flow, "Waiting for the code to be entered at GitHub")
        await flow
    except LoginCancelled:
        app.transcript.notice(f"{spec.name}: login cancelled", "warning")
        return False
    except LoginError as exc:
        app.transcript.notice(f"{spec.name}: login failed: {exc}", "error")
        return False
    registry.refresh()
    app.transcript.notice(f"Logged in to {spec.name}; saved in {registry.oauth.auth.path}")
    return True


async def _wait_cancellable(
    app: KnightcodeApp, flow: asyncio.Future[OAuthCredentials], title: str
) -> None:
    """Show a waiting dialog until ``flow`` ends; Escape (or Enter) in it cancels ``flow``.

    :raises LoginCancelled: the user cancelled
    """
    dialog = asyncio.ensure_future(app.dialogs.select(f"{title} (Esc cancels)", ["Cancel"]))
    dialog.add_done_callback(lambda _: flow.cancel())  # a no-op once the flow has ended
    try:
        await flow
    except asyncio.CancelledError:
        if not dialog.done():
            raise  # the command itself was cancelled
        raise LoginCancelled("login cancelled") from None
    finally:
        dialog.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await dialog
