"""The subscription providers: their logins, refreshes, and what their requests need beyond the
token (their models come from the built-in catalogue, :mod:`knightcode._llm.builtin`).

``anthropic`` is the API provider itself: a subscription token (``sk-ant-oat…``) is sent as a
bearer token with Claude Code's beta headers and identity (see
:mod:`knightcode._llm.anthropic_oauth`). ``openai-codex`` and ``github-copilot`` exist only through
their logins.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from knightcode._auth.credentials import OAuthCredentials
from knightcode._llm.types import Model, StreamOptions

__all__ = [
    "OAUTH_PROVIDERS",
    "OAuthProvider",
    "apply_credentials",
]


@dataclass(frozen=True)
class OAuthProvider:
    """A provider one can log in to with a subscription.

    :param id: the provider name (auth.json key, ``/login`` argument)
    :param name: what the user sees
    :param kind: ``"browser"`` (authorization code) or ``"device"`` (a code typed at GitHub)
    :param module: the module of its flow (imported when first needed: start-up pays nothing)
    """

    id: str
    name: str
    kind: str
    module: str

    async def refresh(self, credentials: OAuthCredentials) -> OAuthCredentials:
        """New credentials from stored ones. :raises LoginError: the provider refused."""
        flow = importlib.import_module(f"knightcode._auth.{self.module}")
        refresh: Callable[[OAuthCredentials], Awaitable[OAuthCredentials]] = flow.refresh
        return await refresh(credentials)


OAUTH_PROVIDERS: dict[str, OAuthProvider] = {
    "anthropic": OAuthProvider("anthropic", "Anthropic (Claude Pro/Max)", "browser", "anthropic"),
    "openai-codex": OAuthProvider("openai-codex", "ChatGPT Plus/Pro (Codex)", "browser", "codex"),
    "github-copilot": OAuthProvider("github-copilot", "GitHub Copilot", "device", "copilot"),
}


def apply_credentials(
    model: Model, options: StreamOptions, credentials: OAuthCredentials, initiator: str = "user"
) -> tuple[Model, StreamOptions]:
    """The model and options of one request made with ``credentials``: the token as the key,
    plus what the provider wants besides (Copilot's API host and editor headers, Codex's
    account header).
    """
    from knightcode._auth import codex, copilot

    headers = dict(options.headers)
    if model.provider == "github-copilot":
        base_url = copilot.api_base_url(credentials.access, credentials.text("enterpriseUrl"))
        model = dataclasses.replace(model, base_url=base_url)
        headers = {
            **copilot.COPILOT_HEADERS,
            "Openai-Intent": "conversation-edits",
            "X-Initiator": initiator,
            **headers,
        }
    elif model.provider == "openai-codex":
        account = credentials.text("accountId") or codex.account_id(credentials.access)
        if account:
            headers = {
                "chatgpt-account-id": account,
                "OpenAI-Beta": "responses=experimental",
                **headers,
            }
    return model, dataclasses.replace(options, api_key=credentials.access, headers=headers)
