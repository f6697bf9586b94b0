"""Turning the agent's messages into what a provider is sent.

The session's conversion renders the agent's own roles (bash executions, summaries, custom
messages) as user text. Repairs a provider needs — leaving out failed or aborted attempts,
answering tool calls that never got a result — happen in :mod:`knightcode._llm.transform`, right
before each client builds its request.
"""

from __future__ import annotations

from typing import Any

from knightcode._session.messages import convert_to_llm


def to_provider_messages(messages: list[dict[str, Any]]) -> list[Any]:
    """The provider messages (user, assistant, toolResult) for an agent context."""
    return list(convert_to_llm(messages))  # type: ignore[arg-type]
