"""The turn loop: prompt -> streamed assistant message -> tool calls -> tool results -> next turn.

Events, in order, for a prompt answered after one tool round trip::

    agent_start, turn_start, message_start/end (the prompt),
    message_start (assistant), message_update…, message_end,
    tool_execution_start…, tool_execution_update…, tool_execution_end…,
    message_start/end (each tool result, in call order), turn_end,
    turn_start, message_start, message_update…, message_end, turn_end, agent_end

Steering messages are delivered after the current tool batch, before the next request;
follow-up messages only when the agent would otherwise stop. An assistant message that ends in
an error or abort ends the run at once. The loop knows nothing of providers or session files:
``LoopConfig.stream`` talks to the model and the ``emit`` callback records and publishes.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from knightcode._agent.tool_calls import fail_truncated_calls, run_tool_calls

if TYPE_CHECKING:
    from knightcode._agent.loop_types import EmitFn, LoopConfig, TurnInfo
    from knightcode._types.messages import AgentMessage, AssistantMessage, ToolCall

__all__ = ["run_agent_loop", "run_agent_loop_continue", "stream_assistant", "tool_calls_of"]


async def run_agent_loop(
    prompts: list[AgentMessage], context: list[AgentMessage], config: LoopConfig, emit: EmitFn
) -> list[AgentMessage]:
    """Add ``prompts`` to ``context`` (in place) and run until the model stops.

    :returns: the messages this run produced, prompts included
    """
    new_messages = list(prompts)
    await emit({"type": "agent_start"})
    await emit({"type": "turn_start"})
    for prompt in prompts:
        await emit({"type": "message_start", "message": prompt})
        await emit({"type": "message_end", "message": prompt})
        context.append(prompt)
    await _run(context, new_messages, config, emit)
    return new_messages


async def run_agent_loop_continue(
    context: list[AgentMessage], config: LoopConfig, emit: EmitFn
) -> list[AgentMessage]:
    """Run from the current context without a new prompt (retries, queued messages).

    :raises ValueError: when there is nothing to answer (empty context, or it ends with an
        assistant message)
    """
    if not context:
        raise ValueError("Cannot continue: no messages in context")
    if context[-1]["role"] == "assistant":
        raise ValueError("Cannot continue from message role: assistant")
    new_messages: list[AgentMessage] = []
    await emit({"type": "agent_start"})
    await emit({"type": "turn_start"})
    await _run(context, new_messages, config, emit)
    return new_messages


def tool_calls_of(message: AssistantMessage) -> list[ToolCall]:
    """The tool calls of an assistant message, in order."""
    return [block for block in message["content"] if block["type"] == "toolCall"]


async def _run(
    context: list[AgentMessage], new_messages: list[AgentMessage], config: LoopConfig, emit: EmitFn
) -> None:
    from knightcode._agent.loop_types import TurnInfo

    last_turn: TurnInfo | None = None
    pending = config.get_steering() if config.get_steering else []
    while True:
        more_tool_calls = True
        while more_tool_calls or pending:
            if last_turn is not None:
                if config.prepare_next_turn is not None:
                    await config.prepare_next_turn(last_turn)
                # Preparation may take long (compaction); pick up steering that arrived meanwhile,
                # but only if none is pending, or one-at-a-time mode would deliver two at once.
                if not pending and config.get_steering:
                    pending = config.get_steering()
                await emit({"type": "turn_start"})
            for queued in pending:
                await emit({"type": "message_start", "message": queued})
                await emit({"type": "message_end", "message": queued})
                context.append(queued)
                new_messages.append(queued)
            pending = []

            message = await stream_assistant(context, config, emit)
            new_messages.append(message)
            if message["stopReason"] in ("error", "aborted"):
                await emit({"type": "turn_end", "message": message, "toolResults": []})
                await emit({"type": "agent_end", "messages": new_messages})
                return

            calls = tool_calls_of(message)
            results = []
            more_tool_calls = False
            if calls:
                if message["stopReason"] == "length":
                    results = await fail_truncated_calls(calls, emit)
                else:
                    results = await run_tool_calls(calls, config, emit)
                more_tool_calls = not config.signal.aborted
                context.extend(results)
                new_messages.extend(results)
            await emit({"type": "turn_end", "message": message, "toolResults": results})
            last_turn = TurnInfo(message, results, context, new_messages)
            if config.signal.aborted:
                break
            pending = config.get_steering() if config.get_steering else []
        if config.signal.aborted:
            break
        follow_up = config.get_follow_up() if config.get_follow_up else []
        if not follow_up:
            break
        pending = follow_up
    await emit({"type": "agent_end", "messages": new_messages})


async def stream_assistant(
    context: list[AgentMessage], config: LoopConfig, emit: EmitFn
) -> AssistantMessage:
    """One provider request; emits message_start, message_update per stream event, message_end.

    The partial assistant message is in ``context`` while it streams (so a concurrent reader of
    the state sees it) and is replaced by the final message at the end.
    """
    messages = context
    if config.transform_context is not None:
        messages = await config.transform_context(list(context))
    partial: AssistantMessage | None = None
    final: AssistantMessage | None = None
    async for event in config.stream(messages, config.tools):
        if event["type"] == "start":
            partial = event["partial"]
            context.append(partial)
            await emit({"type": "message_start", "message": partial})
        elif event["type"] == "done":
            final = event["message"]
            break
        elif event["type"] == "error":
            final = event["error"]
            break
        elif partial is not None and not config.signal.aborted:
            # After an abort the events already received are not passed on: the message ends
            # aborted, and a plugin's handler stopped by the abort is not called for each.
            await emit(
                {"type": "message_update", "message": partial, "assistantMessageEvent": event}
            )
    if final is None:
        final = (
            partial
            if partial is not None
            else _empty_error("the provider stream ended without a final message")
        )
    if partial is not None:
        context[-1] = final
    else:
        context.append(final)
        await emit({"type": "message_start", "message": final})
    await emit({"type": "message_end", "message": final})
    return final


def _empty_error(text: str) -> AssistantMessage:
    return {
        "role": "assistant",
        "content": [],
        "api": "",
        "provider": "",
        "model": "",
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "error",
        "errorMessage": text,
        "timestamp": int(time.time() * 1000),
    }
