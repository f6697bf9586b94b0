"""Model providers: provider-neutral types, the model registry, and the wire clients.

Stream events and messages are plain dicts shaped like the reference's (see
:mod:`knightcode._llm.types`). :class:`ModelRegistry` knows the models (built-in, plugin,
models.json) and their keys, and :meth:`ModelRegistry.stream` dispatches to the client for the
model's API. :mod:`knightcode._llm.errors` classifies failures for retry and compaction.

Names are imported on first use: ``from knightcode._llm.errors import is_retryable`` must not pay
for httpx.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING

from knightcode._lazy import lazy_attributes


def _skip_httpx_command_line() -> None:
    """Keep httpx from importing its command-line tool.

    ``import httpx`` also imports ``httpx._main``, the ``httpx`` CLI, which pulls in click, rich
    and pygments (about 40 ms, measured) that a library user never needs. A stand-in module is
    placed first, unless httpx is already imported; running the ``httpx`` CLI itself is a
    different process and unaffected.
    """
    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return
    stand_in = types.ModuleType("httpx._main")

    def main(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the httpx command line is not loaded inside knightcode")

    stand_in.main = main  # type: ignore[attr-defined]
    sys.modules["httpx._main"] = stand_in


_skip_httpx_command_line()

if TYPE_CHECKING:
    from knightcode._llm.anthropic_messages import stream_anthropic_messages
    from knightcode._llm.classify import (
        BoolAnswer,
        BoolQuestion,
        ChoiceAnswer,
        ChoiceQuestion,
        Classification,
        ClassificationError,
        ClassifyRequest,
        ScoreAnswer,
        ScoreQuestion,
        answer_from_probabilities,
    )
    from knightcode._llm.discovery import DiscoveredModels, DiscoveryError, ProviderAccess
    from knightcode._llm.errors import (
        backoff_delay_ms,
        classify_error,
        is_context_overflow,
        is_retryable,
        retry_after_seconds,
    )
    from knightcode._llm.keys import AuthStorage, resolve_config_value
    from knightcode._llm.openai_completions import stream_openai_completions
    from knightcode._llm.registry import ModelRegistry
    from knightcode._llm.types import (
        Context,
        Model,
        ModelCost,
        StreamOptions,
        ThinkingLevel,
        Tool,
        calculate_cost,
        new_assistant_message,
    )
    from knightcode._types.stream import AssistantMessageEvent, DoneEvent, ErrorEvent

__all__ = [
    "AssistantMessageEvent",
    "AuthStorage",
    "BoolAnswer",
    "BoolQuestion",
    "ChoiceAnswer",
    "ChoiceQuestion",
    "Classification",
    "ClassificationError",
    "ClassifyRequest",
    "Context",
    "DiscoveredModels",
    "DiscoveryError",
    "DoneEvent",
    "ErrorEvent",
    "Model",
    "ModelCost",
    "ModelRegistry",
    "ProviderAccess",
    "ScoreAnswer",
    "ScoreQuestion",
    "StreamOptions",
    "ThinkingLevel",
    "Tool",
    "answer_from_probabilities",
    "backoff_delay_ms",
    "calculate_cost",
    "classify_error",
    "is_context_overflow",
    "is_retryable",
    "new_assistant_message",
    "resolve_config_value",
    "retry_after_seconds",
    "stream_anthropic_messages",
    "stream_openai_completions",
]

_LOCATIONS = {
    **{
        name: "knightcode._llm.classify"
        for name in (
            "BoolAnswer",
            "BoolQuestion",
            "ChoiceAnswer",
            "ChoiceQuestion",
            "Classification",
            "ClassificationError",
            "ClassifyRequest",
            "ScoreAnswer",
            "ScoreQuestion",
            "answer_from_probabilities",
        )
    },
    "DiscoveredModels": "knightcode._llm.discovery",
    "DiscoveryError": "knightcode._llm.discovery",
    "ProviderAccess": "knightcode._llm.discovery",
    "stream_anthropic_messages": "knightcode._llm.anthropic_messages",
    "backoff_delay_ms": "knightcode._llm.errors",
    "classify_error": "knightcode._llm.errors",
    "is_context_overflow": "knightcode._llm.errors",
    "is_retryable": "knightcode._llm.errors",
    "retry_after_seconds": "knightcode._llm.errors",
    "AuthStorage": "knightcode._llm.keys",
    "resolve_config_value": "knightcode._llm.keys",
    "stream_openai_completions": "knightcode._llm.openai_completions",
    "ModelRegistry": "knightcode._llm.registry",
    "AssistantMessageEvent": "knightcode._types.stream",
    "Context": "knightcode._llm.types",
    "DoneEvent": "knightcode._types.stream",
    "ErrorEvent": "knightcode._types.stream",
    "Model": "knightcode._llm.types",
    "ModelCost": "knightcode._llm.types",
    "StreamOptions": "knightcode._llm.types",
    "ThinkingLevel": "knightcode._llm.types",
    "Tool": "knightcode._llm.types",
    "calculate_cost": "knightcode._llm.types",
    "new_assistant_message": "knightcode._llm.types",
}


__getattr__ = lazy_attributes(__name__, _LOCATIONS)


def __dir__() -> list[str]:
    return sorted(__all__)
