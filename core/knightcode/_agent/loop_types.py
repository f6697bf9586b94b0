"""The contract between the turn loop and whoever drives it (``AgentSession``, tests)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from knightcode._plugins.definitions import ToolDefinition

Message = dict[str, Any]
"""A message as stored in the session (user, assistant, toolResult, custom …), a plain dict."""

Event = dict[str, Any]
"""An agent event (``agent_start``, ``message_update`` …), a plain dict with a ``type``."""

EmitFn = Callable[[Event], Awaitable[None]]

StreamFn = Callable[[list[Message], Mapping[str, ToolDefinition]], AsyncIterator[Event]]
"""``stream(messages, tools)``: one provider request for the given context, as stream events
(``start``, ``text_delta`` …, ``done``/``error``). The driver closes over model, system prompt
and options, so the loop stays provider-neutral."""


@dataclass
class TurnInfo:
    """A finished turn, for the between-turns callback."""

    message: Message
    tool_results: list[Message]
    context: list[Message]
    new_messages: list[Message]


@dataclass
class LoopConfig:
    """Everything one run of the turn loop needs.

    :param stream: see :data:`StreamFn`
    :param tools: the active tools by name
    :param signal: set to abort; the stream and running tools watch it
    :param tool_context: builds the ``ctx`` passed to ``tool.execute`` for one call
    :param transform_context: the ``context`` hook: messages about to be sent -> messages to send
    :param before_tool_call: the ``tool_call`` hook; returns ``{"block": True, "reason": …}`` to
        block; an exception blocks too and becomes the error result
    :param after_tool_call: the ``tool_result`` hook; returns a patch of content/details/is_error
    :param get_steering: pending steering messages (taken off the queue)
    :param get_follow_up: pending follow-up messages (taken off the queue)
    :param prepare_next_turn: runs between turns, before the next request (compaction checks)
    :param tool_timeout_ms: default per-call timeout (``None`` or 0: none); a numeric ``timeout``
        argument in seconds overrides it per call
    """

    stream: StreamFn
    tools: Mapping[str, ToolDefinition]
    signal: asyncio.Event
    tool_context: Callable[[str], Any]
    transform_context: Callable[[list[Message]], Awaitable[list[Message]]] | None = None
    before_tool_call: (
        Callable[[str, str, dict[str, Any]], Awaitable[Mapping[str, Any] | None]] | None
    ) = None
    after_tool_call: Callable[..., Awaitable[Mapping[str, Any] | None]] | None = None
    get_steering: Callable[[], list[Message]] | None = None
    get_follow_up: Callable[[], list[Message]] | None = None
    prepare_next_turn: Callable[[TurnInfo], Awaitable[None]] | None = None
    tool_timeout_ms: int | None = None
    sequential: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
