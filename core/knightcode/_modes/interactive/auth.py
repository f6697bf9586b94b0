"""``/login`` and ``/logout``: subscription logins and API keys in ``auth.json`` (0600), or a
plugin provider's own login.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from knightcode._auth.providers import OAUTH_PROVIDERS
from knightcode._modes.interactive.oauth_login import subscription_login

if TYPE_CHECKING:
    from knightcode._modes.interactive.app import KnightcodeApp

__all__ = ["login", "logout"]

#: Subscription providers that also take an API key (offered as a second entry in the list).
KEYED = frozenset({"anthropic"})


async def login(app: KnightcodeApp, args: str) -> None:
    registry = app.agent.model_registry
    providers = {item.definition.name: item.definition for item in app.host.registrations.providers}
    names = sorted(set(registry.providers) | set(providers))
    # Subscriptions first; "/login anthropic" runs the subscription login, as the reference.
    choices = {f"{p} — {s.name} (subscription login)": p for p, s in OAUTH_PROVIDERS.items()}
    choices.update({name: name for name in names if name not in OAUTH_PROVIDERS or name in KEYED})
    if args.strip():
        provider = args.strip()
    else:
        picked = await app.dialogs.select("Log in to which provider?", list(choices))
        if not picked:
            return
        provider = choices[picked]
        if provider in OAUTH_PROVIDERS and picked == provider:  # the API-key entry
            await _store_key(app, provider)
            return
    if provider not in names:
        app.transcript.notice(f"Unknown provider {provider!r}; known: {', '.join(names)}", "error")
        return
    if provider in OAUTH_PROVIDERS:
        await subscription_login(app, provider)
        return
    definition = providers.get(provider)
    own_login = getattr(definition, "login", None) if definition is not None else None
    if own_login is not None and app.host.context is not None:
        result = own_login(app.host.context)
        if inspect.isawaitable(result):
            await result
        registry.refresh()
        return
    await _store_key(app, provider)


async def _store_key(app: KnightcodeApp, provider: str) -> None:
    registry = app.agent.model_registry
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
        app.transcript.notice("No login or key is stored in auth.json")
        return
    provider = args.strip() or await app.dialogs.select(
        "Remove the login or key of which provider?", stored
    )
    if not provider:
        return
    if registry.auth.remove(provider):
        registry.refresh()
        app.transcript.notice(f"Removed the {provider} login")
    else:
        app.transcript.notice(f"No login or key stored for {provider}", "warning")
