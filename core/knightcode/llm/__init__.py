"""Model providers: provider-neutral types, the model registry, and the wire clients.

Stream events and messages are plain dicts shaped like the reference's (see
:mod:`knightcode.llm.types`). :class:`ModelRegistry` knows the models (built-in, plugin,
models.json) and their keys, and :meth:`ModelRegistry.stream` dispatches to the client for the
model's API. :mod:`knightcode.llm.errors` classifies failures for retry and compaction.

Names are imported on first use: ``from knightcode.llm.errors import is_retryable`` must not pay
for httpx and pydantic.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import TYPE_CHECKING, Any


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
    from knightcode.llm.anthropic_messages import stream_anthropic_messages
    from knightcode.llm.classify import (
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
    from knightcode.llm.discovery import DiscoveredModels, DiscoveryError, ProviderAccess
    from knightcode.llm.errors import (
        backoff_delay_ms,
        classify_error,
        is_context_overflow,
        is_retryable,
        retry_after_seconds,
    )
    from knightcode.llm.keys import AuthStorage, resolve_config_value
    from knightcode.llm.openai_completions import stream_openai_completions
    from knightcode.llm.registry import ModelRegistry
    from knightcode.llm.types import (
        AssistantMessageEvent,
        Context,
        DoneEvent,
        ErrorEvent,
        Model,
        ModelCost,
        StreamOptions,
        ThinkingLevel,
        Tool,
        calculate_cost,
        new_assistant_message,
    )

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
        name: "knightcode.llm.classify"
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
    "DiscoveredModels": "knightcode.llm.discovery",
    "DiscoveryError": "knightcode.llm.discovery",
    "ProviderAccess": "knightcode.llm.discovery",
    "stream_anthropic_messages": "knightcode.llm.anthropic_messages",
    "backoff_delay_ms": "knightcode.llm.errors",
    "classify_error": "knightcode.llm.errors",
    "is_context_overflow": "knightcode.llm.errors",
    "is_retryable": "knightcode.llm.errors",
    "retry_after_seconds": "knightcode.llm.errors",
    "AuthStorage": "knightcode.llm.keys",
    "resolve_config_value": "knightcode.llm.keys",
    "stream_openai_completions": "knightcode.llm.openai_completions",
    "ModelRegistry": "knightcode.llm.registry",
    "AssistantMessageEvent": "knightcode.llm.types",
    "Context": "knightcode.llm.types",
    "DoneEvent": "knightcode.llm.types",
    "ErrorEvent": "knightcode.llm.types",
    "Model": "knightcode.llm.types",
    "ModelCost": "knightcode.llm.types",
    "StreamOptions": "knightcode.llm.types",
    "ThinkingLevel": "knightcode.llm.types",
    "Tool": "knightcode.llm.types",
    "calculate_cost": "knightcode.llm.types",
    "new_assistant_message": "knightcode.llm.types",
}


def __getattr__(name: str) -> Any:
    location = _LOCATIONS.get(name)
    if location is None:
        raise AttributeError(f"module 'knightcode.llm' has no attribute {name!r}")
    value = getattr(import_module(location), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
