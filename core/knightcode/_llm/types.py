"""Provider-neutral types: models, the request context and stream options.

Messages and stream events are plain dicts (:mod:`knightcode._types.messages`,
:mod:`knightcode._types.stream`) shaped exactly like the reference's, because the stream is the hot
path.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from knightcode._abort import AbortSignal
from knightcode._types.messages import AssistantMessage, LlmMessage, ThinkingLevel, Usage
from knightcode._types.stream import AssistantMessageEvent

__all__ = [
    "KNOWN_APIS",
    "Context",
    "Model",
    "ModelCost",
    "OnPayload",
    "OnResponse",
    "StreamFunction",
    "StreamOptions",
    "ThinkingLevel",
    "Tool",
    "calculate_cost",
    "new_assistant_message",
    "set_usage",
]

KNOWN_APIS = (
    "openai-completions",
    "anthropic-messages",
    "openai-responses",
    "azure-openai-responses",
    "openai-codex-responses",
    "google-generative-ai",
    "bedrock-converse-stream",
)
"""Wire protocols knightcode has a client for; plugins may serve others through ``stream``."""


@dataclass(frozen=True)
class ModelCost:
    """Prices in dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(frozen=True)
class Model:
    """One model of one provider, as the registry knows it.

    :param provider: provider name, the first half of ``provider/id``
    :param id: the model id sent to the API
    :param name: display name
    :param api: wire protocol: ``"openai-completions"``, ``"anthropic-messages"`` or a plugin's own
    :param base_url: endpoint base URL, e.g. ``https://api.openai.com/v1``
    :param context_window: context window in tokens
    :param max_tokens: maximum output tokens
    :param reasoning: whether the model can think (thinking levels apply)
    :param input: accepted input kinds, ``("text",)`` or ``("text", "image")``
    :param cost: prices per million tokens
    :param headers: extra request headers as configured (values may still name an environment
        variable or a ``!command``; :meth:`ModelRegistry.stream` sends them resolved)
    :param compat: OpenAI-compatibility switches (``maxTokensField``, ``supportsDeveloperRole`` …)
    :param thinking_level_map: models.json ``thinkingLevelMap``: the effort value a thinking
        level is sent as (``{"xhigh": "xhigh"}``), or None for "send no effort at this level"
    :param kind: ``"chat"`` for a model that streams replies, ``"classifier"`` for one that only
        answers typed questions (:meth:`ModelRegistry.classify`); classifiers are listed apart
        (``ModelRegistry.classifiers``) and never offered as the session's model
    """

    provider: str
    id: str
    name: str
    api: str
    base_url: str
    context_window: int = 128000
    max_tokens: int = 16384
    reasoning: bool = False
    input: tuple[str, ...] = ("text",)
    cost: ModelCost = field(default_factory=ModelCost)
    # dicts are not hashable; hashing a model by its identity fields is what callers want anyway.
    headers: Mapping[str, str] = field(default_factory=dict, hash=False)
    compat: Mapping[str, object] = field(default_factory=dict, hash=False)
    thinking_level_map: Mapping[str, str | None] = field(default_factory=dict, hash=False)
    kind: Literal["chat", "classifier"] = "chat"

    @property
    def ref(self) -> str:
        """``provider/id``, the form ``--model`` and settings accept."""
        return f"{self.provider}/{self.id}"


@dataclass(frozen=True)
class Tool:
    """A tool as the model is told about it.

    :param name: tool name
    :param description: what it does, for the model
    :param parameters: JSON schema of the arguments object
    """

    name: str
    description: str
    parameters: Mapping[str, object]


@dataclass
class Context:
    """Everything one request sends besides the options.

    :param system_prompt: the system prompt, or None for none
    :param messages: provider messages (``user``, ``assistant``, ``toolResult`` dicts)
    :param tools: the tools the model may call
    """

    system_prompt: str | None = None
    messages: list[LlmMessage] = field(default_factory=list)
    tools: list[Tool] = field(default_factory=list)


OnPayload = Callable[[dict[str, object]], Awaitable[dict[str, object] | None]]
"""``before_provider_request``: receives the request body, returns a replacement or None."""
OnResponse = Callable[[int, dict[str, str]], Awaitable[None] | None]
"""``after_provider_response``: receives the status code and the response headers."""


@dataclass
class StreamOptions:
    """Per-request options.

    :param api_key: the key to send; None sends no credentials (local endpoints)
    :param max_tokens: output token limit; None uses the API's default (Anthropic requires one,
        so its client falls back to the model's ``max_tokens``, at most 32000)
    :param temperature: sampling temperature, or None for the provider default
    :param reasoning: thinking level; None or ``"off"`` asks for no thinking
    :param thinking_budgets: token budgets per level for budget-based thinking (Anthropic)
    :param signal: set it to abort: the stream ends promptly with an ``aborted`` error event
    :param idle_timeout_ms: longest wait for the next bytes (settings ``httpIdleTimeoutMs``;
        None: the registry's setting, 300000 without one; 0: no limit)
    :param connect_timeout_ms: longest wait for the connection
    :param max_retry_delay_ms: longest ``Retry-After`` passed on as a wait hint (settings
        ``retry.provider.maxRetryDelayMs``; None: the registry's setting, 60000 without one; 0:
        no limit). A longer one is not waited for: the error message says what the server asked
    :param max_retries: settings ``retry.provider.maxRetries``: attempts after the first for a
        transient failure before any answer arrived (None: the registry's setting, 0 without one)
    :param headers: extra headers, applied over the model's
    :param on_payload: ``before_provider_request`` hook
    :param on_response: ``after_provider_response`` hook
    :param cache_retention: ``"none"`` writes no prompt-cache entries (summarisation requests),
        ``"short"`` (default) the provider's default cache, ``"long"`` a 1-hour cache where offered
    """

    api_key: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning: ThinkingLevel | None = None
    thinking_budgets: Mapping[str, int] | None = None
    signal: AbortSignal | None = None
    idle_timeout_ms: int | None = None
    connect_timeout_ms: int = 30000
    max_retry_delay_ms: int | None = None
    max_retries: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    on_payload: OnPayload | None = None
    on_response: OnResponse | None = None
    cache_retention: Literal["none", "short", "long"] = "short"


StreamFunction = Callable[[Model, Context, StreamOptions], AsyncIterator[AssistantMessageEvent]]
"""``stream(model, context, options)``: the events of one response (a client's signature)."""


def new_assistant_message(model: Model) -> AssistantMessage:
    """An empty assistant message for ``model``, the ``partial`` a client fills in."""
    return {
        "role": "assistant",
        "content": [],
        "api": model.api,
        "provider": model.provider,
        "model": model.id,
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "pending",  # set by the client when the stream ends
        "timestamp": int(time.time() * 1000),
    }


def calculate_cost(model: Model, usage: Usage) -> None:
    """Fill ``usage["cost"]`` from the token counts and the model's prices (per million)."""
    price = model.cost
    cost_input = usage["input"] * price.input / 1e6
    cost_output = usage["output"] * price.output / 1e6
    cost_read = usage["cacheRead"] * price.cache_read / 1e6
    cost_write = usage["cacheWrite"] * price.cache_write / 1e6
    usage["cost"] = {
        "input": cost_input,
        "output": cost_output,
        "cacheRead": cost_read,
        "cacheWrite": cost_write,
        "total": cost_input + cost_output + cost_read + cost_write,
    }


def set_usage(
    message: AssistantMessage,
    model: Model,
    input: int,
    output: int,
    cache_read: int = 0,
    cache_write: int = 0,
) -> None:
    """Replace the message's token counts (in place, so ``partial`` stays current) and its cost."""
    usage = message["usage"]
    usage["input"] = input
    usage["output"] = output
    usage["cacheRead"] = cache_read
    usage["cacheWrite"] = cache_write
    usage["totalTokens"] = input + output + cache_read + cache_write
    calculate_cost(model, usage)
