"""Nested tool calls: the :class:`~knightcode._tools.nested.ToolCaller` the turn loop gives every
running tool as ``ctx.caller`` (behind ``ctx.call_tool``).

A nested call takes the model's path through :mod:`.tool_calls` — lookup, argument validation,
the ``tool_call`` hook, ``execute`` with the run's abort signal and the per-call timeout, the
``tool_result`` hook — with three differences:

* the tool is looked up among the *available* tools (``LoopConfig.available_tools``), so a tool
  the model is not offered (codemode offers only ``code``) can still be run by one it is;
* its id is ``<parent id>.<n>`` and its ``tool_execution_*`` events carry ``parentToolCallId``
  (the innermost caller's, for calls nested deeper);
* no ``toolResult`` message is recorded: the result goes back to the calling tool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from knightcode._tools.nested import NestedResult

if TYPE_CHECKING:
    from knightcode._agent.loop_types import EmitFn, LoopConfig
    from knightcode._plugins.definitions import ToolDefinition
    from knightcode._types.events import AgentEvent
    from knightcode._types.messages import ToolCall

__all__ = ["CANCELLED", "NestedCalls"]

CANCELLED = "Cancelled: the calling tool stopped before this call finished"


class NestedCalls:
    """The nested calls of one running tool call ``parent_id``.

    Made for every call the loop executes (it costs an object, nothing more, until a tool calls
    :meth:`call`).
    """

    def __init__(self, parent_id: str, config: LoopConfig, emit: EmitFn) -> None:
        self._parent_id = parent_id
        self._config = config
        self._emit_outer = emit
        self._count = 0

    @property
    def tools(self) -> Mapping[str, ToolDefinition]:
        """Every tool a nested call may name."""
        config = self._config
        return config.tools if config.available_tools is None else config.available_tools

    async def _emit(self, event: AgentEvent) -> None:
        # Only the innermost caller tags an event: a call nested two deep keeps its own parent.
        if (
            event["type"] == "tool_execution_start"
            or event["type"] == "tool_execution_update"
            or event["type"] == "tool_execution_end"
        ) and "parentToolCallId" not in event:
            event["parentToolCallId"] = self._parent_id
        await self._emit_outer(event)

    async def call(self, name: str, args: dict[str, object]) -> NestedResult:
        """Run tool ``name`` (see :meth:`knightcode.ToolContext.call_tool`)."""
        from knightcode._agent.tool_calls import (
            Outcome,
            emit_end,
            emit_start,
            error_result,
            execute,
            prepare,
        )

        self._count += 1
        call: ToolCall = {
            "type": "toolCall",
            "id": f"{self._parent_id}.{self._count}",
            "name": name,
            "arguments": args,
        }
        await emit_start(call, self._emit)
        try:
            prepared = await prepare(call, self._config, self.tools)
            outcome = (
                prepared
                if isinstance(prepared, Outcome)
                else await execute(prepared, self._config, self._emit)
            )
        except asyncio.CancelledError:
            # The caller gave up on it (its script timed out, the run shuts down): the stream
            # still gets an end for the start it saw.
            await emit_end(Outcome(call, error_result(CANCELLED), True), self._emit)
            raise
        await emit_end(outcome, self._emit)
        return NestedResult(
            content=list(outcome.result.get("content") or []),
            details=outcome.result.get("details"),
            is_error=outcome.is_error,
            tool_call_id=call["id"],
        )
