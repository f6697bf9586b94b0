"""Forwarding agent events to the observation hooks of plugins.

Arguments are only built when some plugin implements the hook, so an idle hook costs one dict
lookup per event — ``message_update`` fires once per streamed delta.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knightcode._plugins.host import PluginHost


class HookBridge:
    """Calls the hook matching each agent event, keeping the turn index hooks receive."""

    def __init__(self, host: PluginHost | None) -> None:
        self.host = host
        self.turn_index = -1

    async def forward(self, event: dict[str, Any]) -> None:
        """Fire the hook for ``event`` (if any plugin listens)."""
        kind = event["type"]
        if kind == "turn_start":
            self.turn_index += 1
        elif kind == "agent_start":
            self.turn_index = -1
        host = self.host
        if host is None or kind not in _ARGUMENTS or not host.has_handlers(kind):
            return
        await host.emit(kind, **_ARGUMENTS[kind](event, self))


def _turn_start(event: dict[str, Any], bridge: HookBridge) -> dict[str, Any]:
    return {"turn_index": bridge.turn_index, "timestamp": int(time.time() * 1000)}


def _turn_end(event: dict[str, Any], bridge: HookBridge) -> dict[str, Any]:
    return {
        "turn_index": bridge.turn_index,
        "message": event["message"],
        "tool_results": event["toolResults"],
    }


_ARGUMENTS: dict[str, Any] = {
    "agent_start": lambda event, bridge: {},
    "agent_end": lambda event, bridge: {
        "messages": event["messages"],
        "will_retry": event.get("willRetry", False),
    },
    "turn_start": _turn_start,
    "turn_end": _turn_end,
    "message_start": lambda event, bridge: {"message": event["message"]},
    "message_update": lambda event, bridge: {
        "message": event["message"],
        "assistant_message_event": event["assistantMessageEvent"],
    },
    "message_end": lambda event, bridge: {"message": event["message"]},
    "tool_execution_start": lambda event, bridge: {
        "tool_call_id": event["toolCallId"],
        "tool_name": event["toolName"],
        "args": event["args"],
    },
    "tool_execution_update": lambda event, bridge: {
        "tool_call_id": event["toolCallId"],
        "tool_name": event["toolName"],
        "args": event["args"],
        "partial_result": event["partialResult"],
    },
    "tool_execution_end": lambda event, bridge: {
        "tool_call_id": event["toolCallId"],
        "tool_name": event["toolName"],
        "result": event["result"],
        "is_error": event["isError"],
    },
}
