"""Count the messages by role."""

from __future__ import annotations

from collections import Counter

from knightcode import AgentMessage, hookimpl

ROLES: Counter[str] = Counter()


@hookimpl
def message_start(message: AgentMessage) -> None:
    """Every message starts once: user, assistant, tool result or custom."""
    ROLES[message["role"]] += 1
