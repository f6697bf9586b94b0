"""``knightcode doctor``'s provider checks: where each configured provider's key comes from, and
whether the provider answers a cheap models-list request with it.

The key itself never leaves this module: findings name only its source (``auth.json``,
``$OPENAI_API_KEY``, ``models.json apiKey (!command)``) and the HTTP status the provider gave.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import httpx

from knightcode._errors import ConfigError

if TYPE_CHECKING:
    from knightcode._llm.providers import ProviderSpec
    from knightcode._llm.registry import ModelRegistry

__all__ = ["ProviderFinding", "check_providers", "key_source"]

TIMEOUT_SECONDS = 5.0
Status = Literal["ok", "problem", "warning", "skipped"]


@dataclass(frozen=True)
class ProviderFinding:
    """What doctor says about one provider."""

    provider: str
    status: Status
    detail: str


def _describe(value: str) -> str:
    """How a configured key value is given, never the value itself."""
    if value.startswith("!"):
        return "!command"
    if value.isupper() and value.replace("_", "").isalnum():
        return f"${value} or literal"
    return "literal"


def key_source(registry: ModelRegistry, spec: ProviderSpec) -> str | None:
    """Where the key of ``spec``'s provider comes from, in the order it is looked up; None when
    there is none. ``!command`` keys are named, not run.

    :raises ConfigError: auth.json is malformed
    """
    import os

    if registry.auth is not None:
        stored = registry.auth.get(spec.name)
        if stored:
            return "auth.json" + (" (!command)" if stored.startswith("!") else "")
    environ = os.environ if registry.environ is None else registry.environ
    for name in spec.env_keys:
        if environ.get(name):
            return f"${name}"
    if spec.api_key is not None:
        if environ.get(spec.api_key):
            return f"${spec.api_key} (models.json apiKey)"
        return f"models.json apiKey ({_describe(spec.api_key)})"
    return None


def _probe(spec: ProviderSpec, key: str | None) -> tuple[str, dict[str, str]] | None:
    """The models-list URL and headers for ``spec``'s API, or None when doctor has no cheap
    request for it.
    """
    base = (spec.base_url or "").rstrip("/")
    if not base:
        return None
    headers: dict[str, str] = {}
    if spec.api in ("openai-completions", "openai-responses"):
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return f"{base}/models", headers
    if spec.api == "anthropic-messages":
        if key:
            headers["x-api-key"] = key
            if spec.auth_header:
                headers["Authorization"] = f"Bearer {key}"
        headers["anthropic-version"] = "2023-06-01"
        return base + ("/models" if base.endswith("/v1") else "/v1/models"), headers
    if spec.api == "google-generative-ai":
        if key:
            headers["x-goog-api-key"] = key
        return f"{base}/models", headers
    return None


async def _check_one(
    registry: ModelRegistry, spec: ProviderSpec, client: httpx.AsyncClient, offline: bool
) -> ProviderFinding:
    name = spec.name
    try:
        source = key_source(registry, spec)
    except ConfigError as error:
        return ProviderFinding(name, "problem", str(error))
    needs_key = registry.needs_api_key(name)
    if needs_key and source is None:
        wanted = " or ".join(f"${env}" for env in spec.env_keys) or "models.json apiKey"
        return ProviderFinding(name, "problem", f"no API key (set {wanted}, or auth.json)")
    where = f"key from {source}" if source else "no key needed"
    if offline:
        return ProviderFinding(name, "skipped", f"{where}; network check skipped (--offline)")
    try:
        key = await asyncio.to_thread(registry.get_api_key, name) if needs_key else None
    except ConfigError as error:
        return ProviderFinding(name, "problem", f"{where}: {error}")
    probe = _probe(spec, key)
    if probe is None:
        return ProviderFinding(name, "skipped", f"{where}; no reachability check for {spec.api}")
    url, headers = probe
    try:
        response = await client.get(url, headers=headers, timeout=TIMEOUT_SECONDS)
    except httpx.TimeoutException:
        return ProviderFinding(
            name, "problem", f"{where}; {url} did not answer within {TIMEOUT_SECONDS:g} s"
        )
    except httpx.HTTPError as error:
        reason = type(error).__name__
        return ProviderFinding(name, "problem", f"{where}; cannot reach {url} ({reason})")
    status = response.status_code
    if status in (401, 403):
        return ProviderFinding(name, "problem", f"{where}; the key was refused (HTTP {status})")
    if status >= 400:
        return ProviderFinding(
            name, "warning", f"{where}; reachable, but {url} answered HTTP {status}"
        )
    return ProviderFinding(name, "ok", f"{where}; reachable (HTTP {status})")


def _configured(registry: ModelRegistry, spec: ProviderSpec) -> bool:
    """Whether the user set this provider up: in models.json, or a built-in with a key."""
    if spec.origin.startswith("models.json"):
        return True
    try:
        return spec.builtin and key_source(registry, spec) is not None
    except ConfigError:
        return True  # a malformed auth.json entry is worth reporting


async def check_providers(registry: ModelRegistry, *, offline: bool) -> list[ProviderFinding]:
    """One finding per configured provider (checked concurrently; each within the timeout)."""
    from knightcode._llm.http import make_client

    # The registry's specs are kernel-internal (the plugin-facing ModelRegistry does not list
    # them); this module is the registry's own package reporting on them.
    specs = list(registry._specs.values())
    chosen = [spec for spec in specs if _configured(registry, spec)]
    async with make_client(registry.proxy) as client:
        return list(
            await asyncio.gather(*(_check_one(registry, s, client, offline) for s in chosen))
        )
