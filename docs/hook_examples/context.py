"""Keep the plugin's own debugging messages out of model requests.

The messages are a copy made for this request: the session keeps them, the model does not see
them.
"""

from __future__ import annotations

from knightcode import AgentMessage, hookimpl


@hookimpl
def context(messages: list[AgentMessage]) -> list[AgentMessage] | None:
    """Drop ``custom`` messages of type ``debug``; None when there are none."""
    kept = [m for m in messages if not (m["role"] == "custom" and m["customType"] == "debug")]
    return kept if len(kept) != len(messages) else None
