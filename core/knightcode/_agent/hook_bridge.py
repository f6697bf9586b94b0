"""Forwarding the turn loop's events to the observation hooks of plugins.

Arguments are only built when some plugin implements the hook, so an idle hook costs one dict
look-up per event — ``message_update`` fires once per streamed delta.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._plugins.hooks import Hooks
    from knightcode._types.events import AgentEvent

__all__ = ["HookBridge"]


class HookBridge:
    """Calls the hook matching each agent event, keeping the turn index hooks receive."""

    def __init__(self, hooks: Hooks | None) -> None:
        self.hooks = hooks
        self.turn_index = -1

    async def forward(self, event: AgentEvent) -> None:
        """Fire the hook for ``event`` (if any plugin listens)."""
        if event["type"] == "turn_start":
            self.turn_index += 1
        elif event["type"] == "agent_start":
            self.turn_index = -1
        hooks = self.hooks
        if hooks is None or not hooks.has(event["type"]):
            return
        if event["type"] == "message_update":
            await hooks.message_update(
                message=event["message"], assistant_message_event=event["assistantMessageEvent"]
            )
        elif event["type"] == "message_start":
            await hooks.message_start(message=event["message"])
        elif event["type"] == "message_end":
            await hooks.message_end(message=event["message"])
        elif event["type"] == "tool_execution_start":
            await hooks.tool_execution_start(
                tool_call_id=event["toolCallId"], tool_name=event["toolName"], args=event["args"]
            )
        elif event["type"] == "tool_execution_update":
            await hooks.tool_execution_update(
                tool_call_id=event["toolCallId"],
                tool_name=event["toolName"],
                args=event["args"],
                partial_result=event["partialResult"],
            )
        elif event["type"] == "tool_execution_end":
            await hooks.tool_execution_end(
                tool_call_id=event["toolCallId"],
                tool_name=event["toolName"],
                result=event["result"],
                is_error=event["isError"],
            )
        elif event["type"] == "turn_start":
            await hooks.turn_start(turn_index=self.turn_index, timestamp=int(time.time() * 1000))
        elif event["type"] == "turn_end":
            await hooks.turn_end(
                turn_index=self.turn_index,
                message=event["message"],
                tool_results=event["toolResults"],
            )
        elif event["type"] == "agent_start":
            await hooks.agent_start()
        elif event["type"] == "agent_end":
            await hooks.agent_end(
                messages=event["messages"], will_retry=event.get("willRetry", False)
            )
