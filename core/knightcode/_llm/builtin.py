"""Built-in providers: endpoints, the environment variables holding their keys, a few models.

This is data, kept deliberately small: the usual models of each provider, in the same shape as
a models.json provider (camelCase, prices in dollars per million tokens). models.json can add
models to these providers, override fields of these models (``modelOverrides``) or point a
provider at a proxy (``baseUrl``). The first model of the first provider with a key is the
default when settings name none.
"""

from __future__ import annotations

from typing import TypedDict

from knightcode._llm.aws_env import AWS_CREDENTIAL_ENV

__all__ = ["BUILTIN_PROVIDERS", "BuiltinModel", "BuiltinProvider"]


class _Cost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float


class BuiltinModel(TypedDict):
    """A model entry, as in models.json."""

    id: str
    name: str
    contextWindow: int
    maxTokens: int
    reasoning: bool
    input: list[str]
    cost: _Cost


class BuiltinProvider(TypedDict):
    """A provider entry: models.json's fields plus ``env``, the variables holding its key."""

    baseUrl: str
    api: str
    env: tuple[str, ...]
    models: list[BuiltinModel]


def _m(
    model_id: str,
    name: str,
    context: int,
    max_tokens: int,
    price: tuple[float, float, float, float],
    reasoning: bool = False,
    images: bool = True,
) -> BuiltinModel:
    return {
        "id": model_id,
        "name": name,
        "contextWindow": context,
        "maxTokens": max_tokens,
        "reasoning": reasoning,
        "input": ["text", "image"] if images else ["text"],
        "cost": {
            "input": price[0],
            "output": price[1],
            "cacheRead": price[2],
            "cacheWrite": price[3],
        },
    }


BUILTIN_PROVIDERS: dict[str, BuiltinProvider] = {
    "anthropic": {
        "baseUrl": "https://api.anthropic.com",
        "api": "anthropic-messages",
        "env": ("ANTHROPIC_API_KEY",),
        "models": [
            _m(
                "claude-sonnet-4-5",
                "Claude Sonnet 4.5",
                200000,
                64000,
                (3, 15, 0.3, 3.75),
                reasoning=True,
            ),
            _m(
                "claude-opus-4-1",
                "Claude Opus 4.1",
                200000,
                32000,
                (15, 75, 1.5, 18.75),
                reasoning=True,
            ),
            _m(
                "claude-haiku-4-5",
                "Claude Haiku 4.5",
                200000,
                64000,
                (1, 5, 0.1, 1.25),
                reasoning=True,
            ),
        ],
    },
    "openai": {
        "baseUrl": "https://api.openai.com/v1",
        "api": "openai-completions",
        "env": ("OPENAI_API_KEY",),
        "models": [
            _m("gpt-5", "GPT-5", 400000, 128000, (1.25, 10, 0.125, 0), reasoning=True),
            _m("gpt-5-mini", "GPT-5 mini", 400000, 128000, (0.25, 2, 0.025, 0), reasoning=True),
            _m("gpt-4.1", "GPT-4.1", 1047576, 32768, (2, 8, 0.5, 0)),
            _m("o4-mini", "o4-mini", 200000, 100000, (1.1, 4.4, 0.275, 0), reasoning=True),
        ],
    },
    "openrouter": {
        "baseUrl": "https://openrouter.ai/api/v1",
        "api": "openai-completions",
        "env": ("OPENROUTER_API_KEY",),
        "models": [
            _m(
                "anthropic/claude-sonnet-4.5",
                "Claude Sonnet 4.5 (OpenRouter)",
                1000000,
                64000,
                (3, 15, 0.3, 3.75),
                reasoning=True,
            ),
            _m(
                "openai/gpt-5",
                "GPT-5 (OpenRouter)",
                400000,
                128000,
                (1.25, 10, 0.125, 0),
                reasoning=True,
            ),
            _m(
                "qwen/qwen3-coder",
                "Qwen3 Coder (OpenRouter)",
                262144,
                65536,
                (0.22, 0.95, 0, 0),
                images=False,
            ),
        ],
    },
    "groq": {
        "baseUrl": "https://api.groq.com/openai/v1",
        "api": "openai-completions",
        "env": ("GROQ_API_KEY",),
        "models": [
            _m(
                "openai/gpt-oss-120b",
                "GPT-OSS 120B (Groq)",
                131072,
                65536,
                (0.15, 0.75, 0, 0),
                reasoning=True,
                images=False,
            ),
            _m(
                "llama-3.3-70b-versatile",
                "Llama 3.3 70B (Groq)",
                131072,
                32768,
                (0.59, 0.79, 0, 0),
                images=False,
            ),
        ],
    },
    "mistral": {
        "baseUrl": "https://api.mistral.ai/v1",
        "api": "openai-completions",
        "env": ("MISTRAL_API_KEY",),
        "models": [
            _m(
                "devstral-medium-latest",
                "Devstral Medium",
                131072,
                32768,
                (0.4, 2, 0, 0),
                images=False,
            ),
            _m("mistral-large-latest", "Mistral Large", 131072, 32768, (2, 6, 0, 0)),
            _m("codestral-latest", "Codestral", 256000, 32768, (0.3, 0.9, 0, 0), images=False),
        ],
    },
    "xai": {
        "baseUrl": "https://api.x.ai/v1",
        "api": "openai-completions",
        "env": ("XAI_API_KEY",),
        "models": [
            _m(
                "grok-code-fast-1",
                "Grok Code Fast 1",
                256000,
                10000,
                (0.2, 1.5, 0.02, 0),
                reasoning=True,
                images=False,
            ),
            _m("grok-4", "Grok 4", 256000, 64000, (3, 15, 0.75, 0), reasoning=True),
        ],
    },
    "google": {
        "baseUrl": "https://generativelanguage.googleapis.com/v1beta",
        "api": "google-generative-ai",
        "env": ("GEMINI_API_KEY",),
        "models": [
            _m(
                "gemini-2.5-pro",
                "Gemini 2.5 Pro",
                1048576,
                65536,
                (1.25, 10, 0.31, 0),
                reasoning=True,
            ),
            _m(
                "gemini-2.5-flash",
                "Gemini 2.5 Flash",
                1048576,
                65536,
                (0.3, 2.5, 0.075, 0),
                reasoning=True,
            ),
        ],
    },
    "amazon-bedrock": {
        # The region in the host is replaced by AWS_REGION's (see bedrock_converse.bedrock_url).
        "baseUrl": "https://bedrock-runtime.us-east-1.amazonaws.com",
        "api": "bedrock-converse-stream",
        "env": AWS_CREDENTIAL_ENV,
        "models": [
            _m(
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                "Claude Sonnet 4.5 (Bedrock)",
                200000,
                64000,
                (3, 15, 0.3, 3.75),
                reasoning=True,
            ),
            _m("amazon.nova-pro-v1:0", "Nova Pro (Bedrock)", 300000, 10000, (0.8, 3.2, 0.2, 0)),
        ],
    },
}
