"""Warn when the provider's rate limit is reached."""

from __future__ import annotations

from knightcode import HookContext, hookimpl


@hookimpl
def after_provider_response(status: int, headers: dict[str, str], ctx: HookContext) -> None:
    """Header names arrive in lower case."""
    remaining = headers.get("x-ratelimit-remaining-requests")
    if status == 429 or remaining == "0":
        ctx.ui.notify("Provider rate limit reached", "warning")
