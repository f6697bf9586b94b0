"""Where the router is and which key it wants: ``/login llama.cpp``, environment, defaults.

Resolution order, first found wins:

* URL: the ``auth.json`` entry written by ``/login llama.cpp``, then ``LLAMA_BASE_URL``, then
  ``http://127.0.0.1:8080`` (llama-server's default address);
* key: ``--api-key`` for this run, then the ``auth.json`` entry, then ``LLAMA_API_KEY``; none is
  fine (a router started without ``--api-key``).

The ``auth.json`` entry is an ordinary API-key entry with the URL beside the key, so the model
registry finds the key like any provider's (and ``LLAMA_API_KEY`` through the provider's
``env_keys``); without a key it has its own type, which key look-ups skip::

    "llama.cpp": {"type": "api_key", "key": "secret", "baseUrl": "http://127.0.0.1:8080"}
    "llama.cpp": {"type": "llama.cpp", "baseUrl": "http://127.0.0.1:8080"}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from knightcode import AuthStorage

if TYPE_CHECKING:
    from knightcode import HookContext

__all__ = [
    "AUTH_TYPE",
    "DEFAULT_URL",
    "PROVIDER",
    "Connection",
    "connection_for",
    "login",
    "resolve_connection",
    "save_login",
]

PROVIDER = "llama.cpp"
AUTH_TYPE = "llama.cpp"
DEFAULT_URL = "http://127.0.0.1:8080"


@dataclass(frozen=True)
class Connection:
    """One router: its base URL (no trailing slash, no ``/v1``) and the key to send, if any."""

    base_url: str
    api_key: str | None = None

    def headers(self) -> dict[str, str]:
        """Request headers: the key as a bearer token (llama-server also takes X-Api-Key)."""
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    @property
    def is_local(self) -> bool:
        """Whether the router runs on this machine, so the paths it reports are ours to read."""
        host = urlsplit(self.base_url).hostname or ""
        return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def normalise_url(url: str) -> str:
    """``http://host:port`` from what a user typed (a trailing ``/`` or ``/v1`` is dropped)."""
    url = url.strip().rstrip("/")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    if "://" not in url:
        url = "http://" + url
    return url


def _stored(agent_dir: Path | None) -> dict[str, object]:
    if agent_dir is None:
        return {}
    entry = AuthStorage(agent_dir / "auth.json").get_entry(PROVIDER)
    return entry if entry and entry.get("type") in ("api_key", AUTH_TYPE) else {}


def resolve_connection(
    agent_dir: Path | None, environ: Mapping[str, str], key: str | None = None
) -> Connection:
    """The router connection from ``auth.json``, the environment and the defaults.

    :param key: the key the model registry resolved (``--api-key``, auth.json,
        ``LLAMA_API_KEY``); when None, auth.json and ``LLAMA_API_KEY`` are read here
    :raises knightcode.ConfigError: auth.json is unreadable
    """
    stored = _stored(agent_dir)
    url = _text(stored.get("baseUrl")) or environ.get("LLAMA_BASE_URL") or DEFAULT_URL
    key = key or _text(stored.get("key")) or environ.get("LLAMA_API_KEY") or None
    return Connection(normalise_url(url), key)


def _text(value: object) -> str | None:
    """A stored field as text (auth.json is edited by hand too); None when it is empty."""
    return str(value) if value else None


def save_login(agent_dir: Path, url: str, key: str | None) -> Connection:
    """Store the router URL and optional key in ``auth.json`` (mode 0600)."""
    connection = Connection(normalise_url(url), key or None)
    entry = {"type": AUTH_TYPE, "baseUrl": connection.base_url}
    if connection.api_key:
        entry = {"type": "api_key", "key": connection.api_key, "baseUrl": connection.base_url}
    agent_dir.mkdir(parents=True, exist_ok=True)
    AuthStorage(agent_dir / "auth.json").set_entry(PROVIDER, entry)
    return connection


async def connection_for(ctx: HookContext) -> Connection:
    """The connection a hook or command should use: through the session's model registry when
    there is one (so ``--api-key`` counts), else from ``auth.json`` and the environment.
    """
    registry = ctx.model_registry
    if registry is not None and PROVIDER in registry.providers:
        access = await registry.access(PROVIDER)
        return resolve_connection(access.agent_dir, access.environ, access.api_key)
    return resolve_connection(ctx.agent_dir, os.environ)


async def login(ctx: HookContext) -> None:
    """``/login llama.cpp``: ask for the URL and an optional key, check them, store them.

    The connection is checked before it is stored, so a typo is reported at once; an unreachable
    router is stored anyway after a warning (it may simply not be running yet).
    """
    from knightcode_builtins.llama_cpp.router import RouterClient, RouterError

    current = await connection_for(ctx)
    url = await ctx.ui.input("llama.cpp router URL", current.base_url)
    if url is None:
        return
    key = await ctx.ui.input("API key (empty for none)", "", secret=True)
    if key is None:
        return
    connection = Connection(normalise_url(url or current.base_url), key.strip() or None)
    try:
        async with RouterClient(connection) as client:
            state = await client.state()
    except RouterError as exc:
        ctx.ui.notify(f"Saved anyway: {exc}", "warning")
    else:
        loaded = sum(1 for model in state.models if model.selectable)
        ctx.ui.notify(
            f"llama.cpp router at {connection.base_url}: {len(state.models)} models, "
            f"{loaded} loaded",
            "info",
        )
    save_login(ctx.agent_dir, connection.base_url, connection.api_key)
    registry = ctx.model_registry
    if registry is not None:
        await registry.refresh_models([PROVIDER])
