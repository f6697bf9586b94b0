"""Count the characters of text the model streams."""

from __future__ import annotations

from knightcode import AssistantMessageEvent, hookimpl

STREAMED = {"chars": 0}


@hookimpl
def message_update(assistant_message_event: AssistantMessageEvent) -> None:
    """This fires for every delta: keep it quick."""
    if assistant_message_event["type"] == "text_delta":
        STREAMED["chars"] += len(assistant_message_event["delta"])
