"""OAuth tokens in ``auth.json``: read, refreshed before they run out, written back 0600.

Two knightcode processes may share an auth.json. A refresh token is often single-use, so only
one of them may refresh at a time: the refresh holds an exclusive lock on ``auth.json.lock``,
then reads the entry again — when the other process refreshed meanwhile, its new token is used
and no second refresh is made.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from knightcode._auth.credentials import OAuthCredentials
from knightcode._auth.errors import LoginError
from knightcode._auth.providers import OAUTH_PROVIDERS
from knightcode._errors import ConfigError
from knightcode._llm.keys import AuthStorage

__all__ = ["OAuthTokens"]

LOCK_TIMEOUT_SECONDS = 30.0


class OAuthTokens:
    """The OAuth side of an :class:`~knightcode._llm.keys.AuthStorage`.

    :param auth: the auth.json store
    """

    def __init__(self, auth: AuthStorage) -> None:
        self.auth = auth

    def credentials(self, provider: str) -> OAuthCredentials | None:
        """The stored credentials of ``provider``, or None (no entry, or not an OAuth one).

        :raises ConfigError: auth.json is unreadable
        """
        entry = self.auth.get_entry(provider)
        return OAuthCredentials.from_entry(entry) if entry is not None else None

    def has(self, provider: str) -> bool:
        """Whether ``provider`` has stored OAuth credentials that knightcode can refresh."""
        try:
            return provider in OAUTH_PROVIDERS and self.credentials(provider) is not None
        except ConfigError:
            return False

    def save(self, provider: str, credentials: OAuthCredentials) -> None:
        """Store ``credentials`` for ``provider`` (auth.json, mode 0600)."""
        self.auth.set_entry(provider, credentials.to_entry())

    async def fresh(self, provider: str, *, rejected: str | None = None) -> OAuthCredentials:
        """Credentials whose access token is good for a while: refreshed when it is about to
        run out, or when it is ``rejected`` (the token a request just got a 401 for).

        :raises ConfigError: no credentials, or the refresh failed (the message asks for a new
            login; it never contains a token)
        """
        current = self._require(provider)
        if not current.expiring and current.access != rejected:
            return current
        async with self._locked():
            current = self._require(provider)  # another process may have refreshed meanwhile
            if not current.expiring and current.access != rejected:
                return current
            try:
                renewed = await OAUTH_PROVIDERS[provider].refresh(current)
            except LoginError as exc:
                raise ConfigError(
                    f"the {provider} login has expired and could not be renewed ({exc}); "
                    f"log in again: /login {provider} (or: knightcode login {provider})"
                ) from None
            self.save(provider, renewed)
            return renewed

    def _require(self, provider: str) -> OAuthCredentials:
        found = self.credentials(provider)
        if found is None or provider not in OAUTH_PROVIDERS:
            raise ConfigError(f"no {provider} login is stored: /login {provider}")
        return found

    @contextlib.asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        path = Path(f"{self.auth.path}.lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            await _acquire(fd)
            try:
                yield
            finally:
                _release(fd)
        finally:
            os.close(fd)


async def _acquire(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # no advisory locks (Windows): refresh without one
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + LOCK_TIMEOUT_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if loop.time() > deadline:
                raise ConfigError(
                    "another knightcode process has been refreshing the login for "
                    f"{LOCK_TIMEOUT_SECONDS:g} s; try again"
                ) from None
            await asyncio.sleep(0.05)


def _release(fd: int) -> None:
    try:
        import fcntl
    except ImportError:
        return
    fcntl.flock(fd, fcntl.LOCK_UN)
