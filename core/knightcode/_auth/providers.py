"""The subscription providers: their logins, refreshes, built-in model lists, and what their
requests need beyond the token.

``anthropic`` is the API provider itself: a subscription token (``sk-ant-oat…``) is sent as a
bearer token with Claude Code's beta headers and identity (see
:mod:`knightcode._llm.anthropic_oauth`). ``openai-codex`` and ``github-copilot`` exist only through
their logins.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from knightcode._auth.credentials import OAuthCredentials
from knightcode._llm.builtin import BuiltinModel, BuiltinProvider
from knightcode._llm.models_config import ModelConfig
from knightcode._llm.providers import ProviderSpec
from knightcode._llm.types import Model, StreamOptions

__all__ = [
    "OAUTH_PROVIDERS",
    "OAuthProvider",
    "apply_credentials",
    "subscription_specs",
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


def _model(model_id: str, name: str, context: int, output: int, images: bool) -> BuiltinModel:
    # Subscriptions are paid by the month: no per-token cost to show.
    return {
        "id": model_id,
        "name": name,
        "contextWindow": context,
        "maxTokens": output,
        "reasoning": True,
        "input": ["text", "image"] if images else ["text"],
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
    }


_SPECS: dict[str, BuiltinProvider] = {
    "openai-codex": {
        "baseUrl": "https://chatgpt.com/backend-api",
        "api": "openai-codex-responses",
        "env": (),
        "models": [
            _model("gpt-5.1-codex", "GPT-5.1 Codex", 272000, 128000, True),
            _model("gpt-5.1-codex-mini", "GPT-5.1 Codex mini", 272000, 128000, True),
            _model("gpt-5.1", "GPT-5.1", 272000, 128000, True),
        ],
    },
    "github-copilot": {
        "baseUrl": "https://api.individual.githubcopilot.com",
        "api": "openai-completions",
        "env": (),
        "models": [
            _model("gpt-4.1", "GPT-4.1", 128000, 16384, True),
            _model("gpt-5-mini", "GPT-5 mini", 128000, 64000, True),
            _model("claude-sonnet-4.5", "Claude Sonnet 4.5", 128000, 16000, True),
        ],
    },
}

# The reference's compatibility switches for Copilot's chat completions endpoint.
_COPILOT_COMPAT: dict[str, object] = {
    "supportsStore": False,
    "supportsDeveloperRole": False,
    "supportsReasoningEffort": False,
}


def subscription_specs(existing: Mapping[str, ProviderSpec]) -> dict[str, ProviderSpec]:
    """The specs of the subscription-only providers that ``existing`` (the built-in catalogue)
    does not define already; a catalogue that lists them wins.
    """
    specs: dict[str, ProviderSpec] = {}
    for name, data in _SPECS.items():
        if name in existing:
            continue
        spec = ProviderSpec.builtin_spec(name, data)
        if name == "github-copilot":
            # As the reference: Copilot serves Claude 4 models on its Anthropic endpoint.
            models = {
                model["id"]: ModelConfig.parse({**model, "api": "anthropic-messages"})
                for model in data["models"]
                if model["id"].startswith("claude-")
            }
            spec = dataclasses.replace(
                spec, compat=dict(_COPILOT_COMPAT), models={**spec.models, **models}
            )
        specs[name] = spec
    return specs


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
