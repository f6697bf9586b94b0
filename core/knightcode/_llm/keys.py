"""API keys: resolving configured values, and ``<agent-dir>/auth.json``.

A configured key (``apiKey`` in models.json, a plugin provider's ``api_key``, a header value) is
one of:

* ``!command`` — run through the shell; its standard output, stripped, is the value. The result
  is cached for the life of the process (password managers are slow and may prompt);
* the name of an environment variable — used when such a variable is set;
* anything else — the literal value.

Nothing here puts a key's value in an exception message or a log line.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

from knightcode._config.jsonfile import read_json_object, write_json_atomic
from knightcode._errors import ConfigError

__all__ = ["AUTH_FILENAME", "AuthStorage", "resolve_config_value"]

AUTH_FILENAME = "auth.json"
COMMAND_TIMEOUT_SECONDS = 10.0

_command_cache: dict[str, str] = {}
_command_lock = threading.Lock()


def resolve_config_value(
    value: str,
    where: str,
    environ: Mapping[str, str] | None = None,
    timeout: float = COMMAND_TIMEOUT_SECONDS,
) -> str:
    """The value a configured key or header stands for (see the module docstring).

    :param value: the configured text
    :param where: what to name in an error, e.g.
        ``models.json error in /x/models.json: providers.a.apiKey``
    :param environ: the environment (``os.environ`` when None)
    :param timeout: seconds a ``!command`` may take
    :raises ConfigError: the command failed, timed out or printed nothing
    """
    if value.startswith("!"):
        return _run_command(value[1:].strip(), where, timeout)
    env = os.environ if environ is None else environ
    from_env = env.get(value)
    return from_env if from_env else value


def _run_command(command: str, where: str, timeout: float) -> str:
    with _command_lock:
        cached = _command_cache.get(command)
    if cached is not None:
        return cached
    try:
        completed = subprocess.run(
            command,
            shell=True,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ConfigError(f"{where}: the key command did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise ConfigError(
            f"{where}: the key command could not be started: {exc.strerror or exc}"
        ) from None
    if completed.returncode != 0:
        # stderr only: stdout is where a secret would be.
        lines = [line for line in completed.stderr.strip().splitlines() if line.strip()]
        hint = f": {lines[-1].strip()[:200]}" if lines else ""
        raise ConfigError(
            f"{where}: the key command failed with exit code {completed.returncode}{hint}"
        )
    result = completed.stdout.strip()
    if not result:
        raise ConfigError(f"{where}: the key command printed nothing")
    with _command_lock:
        _command_cache[command] = result
    return result


def clear_command_cache() -> None:
    """Forget the results of ``!command`` keys (tests; a key rotated while running)."""
    with _command_lock:
        _command_cache.clear()


class AuthStorage:
    """Keys stored in ``<agent-dir>/auth.json``:
    ``{"<provider>": {"type": "api_key", "key": "…"}}``.

    The file is written atomically with mode 0600 and read on every lookup, so a key added by
    another knightcode process is seen at once.

    :param path: the auth.json path
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, object]:
        return read_json_object(self.path) or {}

    def get(self, provider: str) -> str | None:
        """The stored API key of ``provider``, or None.

        :raises ConfigError: the file is unreadable, or the provider's entry is malformed
        """
        entry = self._read().get(provider)
        if entry is None:
            return None
        return self._key_of(provider, entry)

    def check(self) -> None:
        """Read the file and check every entry, so that a broken auth.json stops a run at
        start-up (exit status 2) instead of failing its first request.

        :raises ConfigError: the file is unreadable, or an entry is malformed
        """
        for provider, entry in self._read().items():
            self._key_of(provider, entry)

    def _key_of(self, provider: str, entry: object) -> str | None:
        """The API key in ``entry`` (None for other credential kinds); a malformed one raises."""
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise ConfigError(
                f"auth.json error in {self.path}: {provider}: "
                'expected {"type": "api_key", "key": "..."}'
            )
        if entry["type"] != "api_key":
            return None  # other credential kinds (OAuth, a plugin's own) are not ours to read
        key = entry.get("key")
        if not isinstance(key, str) or not key:
            raise ConfigError(
                f"auth.json error in {self.path}: {provider}.key: expected a non-empty string"
            )
        return key

    def get_entry(self, provider: str) -> dict[str, object] | None:
        """The whole stored entry of ``provider`` (any ``type``), or None.

        Plugins keep their own credential kinds here, e.g. a server URL beside an optional key:
        ``{"type": "llama.cpp", "baseUrl": "…", "key": "…"}``; :meth:`get` ignores such entries.

        :raises ConfigError: the file is unreadable, or the entry is not an object
        """
        entry = self._read().get(provider)
        if entry is None:
            return None
        if not isinstance(entry, dict):
            raise ConfigError(f"auth.json error in {self.path}: {provider}: expected an object")
        return dict(entry)

    def set_entry(self, provider: str, entry: Mapping[str, object]) -> None:
        """Store ``entry`` (an object with a ``type``) for ``provider``, replacing any other."""
        if not isinstance(entry.get("type"), str):
            raise ValueError('an auth.json entry needs a string "type"')
        data = self._read()
        data[provider] = dict(entry)
        write_json_atomic(self.path, data, mode=0o600)

    def set(self, provider: str, key: str) -> None:
        """Store ``key`` for ``provider`` (replacing any earlier one)."""
        data = self._read()
        data[provider] = {"type": "api_key", "key": key}
        write_json_atomic(self.path, data, mode=0o600)

    def remove(self, provider: str) -> bool:
        """Delete the stored key of ``provider``; False when there was none."""
        data = self._read()
        if provider not in data:
            return False
        del data[provider]
        write_json_atomic(self.path, data, mode=0o600)
        return True

    def providers(self) -> list[str]:
        """Providers that have an entry."""
        return sorted(self._read())
