"""The contract between the turn loop and whoever drives it (``AgentSession``, tests)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knightcode._abort import AbortSignal
    from knightcode._plugins.definitions import ToolDefinition
    from knightcode._plugins.results import Block, ToolResultPatch
    from knightcode._tools.context import ToolContext
    from knightcode._types.events import AgentEvent
    from knightcode._types.messages import (
        AgentMessage,
        AssistantMessage,
        ToolResultContent,
        ToolResultMessage,
    )
    from knightcode._types.stream import AssistantMessageEvent

EmitFn = Callable[["AgentEvent"], Awaitable[None]]

StreamFn = Callable[
    [list["AgentMessage"], Mapping[str, "ToolDefinition"]], AsyncIterator["AssistantMessageEvent"]
]
"""``stream(messages, tools)``: one provider request for the given context, as stream events
(``start``, ``text_delta`` …, ``done``/``error``). The driver closes over model, system prompt
and options, so the loop stays provider-neutral."""

BeforeToolCall = Callable[[str, str, dict[str, object]], Awaitable["Block | None"]]
"""The ``tool_call`` hook: ``(call id, tool name, args)`` -> a block, or None to run it."""


AfterToolCallFn = Callable[
    [str, str, dict[str, object], list["ToolResultContent"], object, bool],
    Awaitable["ToolResultPatch | None"],
]
"""The ``tool_result`` hook: ``(call id, tool name, args, content, details, is_error)`` -> a
patch, or None."""


@dataclass
class TurnInfo:
    """A finished turn, for the between-turns callback."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    context: list[AgentMessage]
    new_messages: list[AgentMessage]


@dataclass
class LoopConfig:
    """Everything one run of the turn loop needs.

    :param stream: see :data:`StreamFn`
    :param tools: the active tools by name
    :param available_tools: every tool a nested call (``ToolContext.call_tool``) may run, active
        or not; None: :attr:`tools`
    :param signal: aborts the run; the stream and running tools wait inside its scopes
    :param tool_context: builds the ``ctx`` passed to ``tool.execute`` for one call
    :param transform_context: the ``context`` hook: messages about to be sent -> messages to send
    :param before_tool_call: the ``tool_call`` hook; an exception blocks the call too and becomes
        the error result
    :param after_tool_call: the ``tool_result`` hook
    :param get_steering: pending steering messages (taken off the queue)
    :param get_follow_up: pending follow-up messages (taken off the queue)
    :param prepare_next_turn: runs between turns, before the next request (compaction checks)
    :param tool_timeout_ms: default per-call timeout (``None`` or 0: none); a numeric ``timeout``
        argument in seconds overrides it per call
    :param sequential: run every tool batch one call at a time
    """

    stream: StreamFn
    tools: Mapping[str, ToolDefinition]
    signal: AbortSignal
    tool_context: Callable[[str, ToolDefinition], ToolContext]
    transform_context: Callable[[list[AgentMessage]], Awaitable[list[AgentMessage]]] | None = None
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCallFn | None = None
    get_steering: Callable[[], list[AgentMessage]] | None = None
    get_follow_up: Callable[[], list[AgentMessage]] | None = None
    prepare_next_turn: Callable[[TurnInfo], Awaitable[None]] | None = None
    tool_timeout_ms: int | None = None
    sequential: bool = False
    available_tools: Mapping[str, ToolDefinition] | None = None
