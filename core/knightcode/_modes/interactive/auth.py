"""``/login`` and ``/logout``: API keys in ``auth.json`` (0600), or a provider's own login."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp

__all__ = ["login", "logout"]


async def login(app: KnightcodeApp, args: str) -> None:
    registry = app.agent.model_registry
    providers = {item.definition.name: item.definition for item in app.host.registrations.providers}
    names = sorted(set(registry.providers) | set(providers))
    provider = args.strip() or await app.dialogs.select("Log in to which provider?", names)
    if not provider:
        return
    if provider not in names:
        app.transcript.notice(f"Unknown provider {provider!r}; known: {', '.join(names)}", "error")
        return
    definition = providers.get(provider)
    own_login = getattr(definition, "login", None) if definition is not None else None
    if own_login is not None and app.host.context is not None:
        result = own_login(app.host.context)
        if inspect.isawaitable(result):
            await result
        registry.refresh()
        return
    key = await app.dialogs.input(f"API key for {provider}", "paste the key", password=True)
    if not key or not key.strip():
        return
    if registry.auth is None:
        app.transcript.notice("No auth.json is configured for this run", "error")
        return
    registry.auth.set(provider, key.strip())
    registry.refresh()
    app.transcript.notice(f"Saved the {provider} key in {app.agent_dir / 'auth.json'}")


async def logout(app: KnightcodeApp, args: str) -> None:
    registry = app.agent.model_registry
    if registry.auth is None:
        app.transcript.notice("No auth.json is configured for this run", "error")
        return
    stored = registry.auth.providers()
    if not stored:
        app.transcript.notice("No key is stored in auth.json")
        return
    provider = args.strip() or await app.dialogs.select("Remove the key of which provider?", stored)
    if not provider:
        return
    if registry.auth.remove(provider):
        registry.refresh()
        app.transcript.notice(f"Removed the {provider} key")
    else:
        app.transcript.notice(f"No key stored for {provider}", "warning")
