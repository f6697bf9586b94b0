"""Running the tool calls of one assistant message.

By default the calls run in parallel: every ``tool_execution_start`` and pre-flight check (lookup,
argument validation, the ``tool_call`` hook) happens in call order, then the tools execute
concurrently, and their results are recorded and emitted in call order. A tool that declares
``execution_mode="sequential"`` makes the whole batch run one call at a time.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from knightcode._agent.nested_calls import NestedCalls
from knightcode._agent.validation import validate_arguments
from knightcode._tools.context import ToolContext

if TYPE_CHECKING:
    from knightcode._agent.loop_types import EmitFn, LoopConfig
    from knightcode._plugins.definitions import ToolDefinition
    from knightcode._types.events import ToolExecutionEndEvent
    from knightcode._types.messages import ToolCall, ToolResult, ToolResultMessage

__all__ = [
    "ABORTED",
    "Outcome",
    "Prepared",
    "emit_end",
    "emit_start",
    "error_result",
    "execute",
    "fail_truncated_calls",
    "prepare",
    "run_tool_calls",
]

ABORTED = "Operation aborted"


@dataclass
class Outcome:
    """A finished (or never started) tool call."""

    call: ToolCall
    result: ToolResult
    is_error: bool
    duration_ms: float | None = None


@dataclass
class Prepared:
    call: ToolCall
    tool: ToolDefinition
    args: dict[str, object]


def error_result(message: str) -> ToolResult:
    """A result holding only ``message``, for a call that failed."""
    return {"content": [{"type": "text", "text": message}], "details": {}}


def _message_of(error: BaseException) -> str:
    text = str(error)
    return text if text else type(error).__name__


async def prepare(
    call: ToolCall, config: LoopConfig, tools: Mapping[str, ToolDefinition] | None = None
) -> Prepared | Outcome:
    """Look the tool up (in ``tools``, default the active ones), validate the arguments and ask
    the ``tool_call`` hook.
    """
    tool = (config.tools if tools is None else tools).get(call["name"])
    if tool is None:
        return Outcome(call, error_result(f"Tool {call['name']} not found"), True)
    try:
        raw = call.get("arguments", {})
        if tool.prepare_arguments is not None:
            raw = tool.prepare_arguments(raw)
        args = validate_arguments(tool.name, raw, tool.parameters)
        if config.before_tool_call is not None:
            verdict = await config.before_tool_call(call["id"], call["name"], args)
            if verdict is not None:
                return Outcome(call, error_result(verdict.reason), True)
    except Exception as error:
        return Outcome(call, error_result(_message_of(error)), True)
    if config.signal.aborted:
        return Outcome(call, error_result(ABORTED), True)
    return Prepared(call, tool, args)


def _timeout_seconds(args: Mapping[str, object], default_ms: int | None) -> float | None:
    """The per-call timer: a numeric ``timeout`` argument (seconds) overrides the default;
    0 disables it; anything malformed keeps the default.
    """
    override = args.get("timeout")
    if isinstance(override, (int, float)) and not isinstance(override, bool):
        if override == 0:
            return None
        if override > 0:
            # The tool enforces its own timeout; the loop's timer is a backstop a little later.
            return float(override) + 5.0
    return default_ms / 1000 if default_ms else None


def _spill_note(partial: ToolResult | None) -> str:
    """Where the output of a timed-out call is, when its last partial result named a file
    (``bash``'s ``details.fullOutputPath``).
    """
    details = partial.get("details") if partial is not None else None
    path = details.get("fullOutputPath") if isinstance(details, dict) else None
    return f"\n\nFull output so far: {path}" if isinstance(path, str) else ""


def _as_result(value: object) -> ToolResult:
    """What a tool returned, as a result: a result dict as it is, anything else as its text."""
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        return value  # type: ignore[return-value]  # the tool's own result dict
    return {"content": [{"type": "text", "text": str(value)}], "details": {}}


async def execute(prepared: Prepared, config: LoopConfig, emit: EmitFn) -> Outcome:
    """Run one tool, streaming its partial results, and apply the ``tool_result`` hook; the tool
    may make nested calls (``ctx.call_tool``), whose events go out through ``emit`` too.
    """
    call = prepared.call
    updates: list[ToolResult] = []
    last_partial: ToolResult | None = None
    pump: asyncio.Task[None] | None = None
    accepting = True

    async def drain() -> None:
        # Emit updates strictly in the order the tool reported them.
        while updates:
            partial = updates.pop(0)
            await emit(
                {
                    "type": "tool_execution_update",
                    "toolCallId": call["id"],
                    "toolName": call["name"],
                    "args": call.get("arguments", {}),
                    "partialResult": partial,
                }
            )

    def on_update(partial: ToolResult) -> None:
        nonlocal pump, last_partial
        if not accepting:
            return
        last_partial = partial
        updates.append(partial)
        if pump is None or pump.done():
            pump = asyncio.ensure_future(drain())

    started = time.monotonic()
    is_error = False
    try:
        ctx = config.tool_context(call["id"], prepared.tool)
        if isinstance(ctx, ToolContext):  # (tests may hand tools something else)
            ctx = replace(ctx, caller=NestedCalls(call["id"], config, emit))
        running = prepared.tool.execute(call["id"], prepared.args, ctx, on_update)
        if inspect.isawaitable(running):
            timeout = _timeout_seconds(prepared.args, config.tool_timeout_ms)
            try:
                value: object = (
                    await asyncio.wait_for(running, timeout) if timeout else await running
                )
            except TimeoutError:
                value = error_result(
                    f'Tool "{call["name"]}" timed out after {timeout:g} seconds. Re-issue it '
                    'with a longer timeout (a "timeout" argument in seconds) or split the work '
                    "into smaller steps." + _spill_note(last_partial)
                )
                is_error = True
        else:
            value = running
        result = _as_result(value)
    except asyncio.CancelledError:
        if pump is not None:
            pump.cancel()  # the updates die with the call
        raise
    except Exception as error:
        result = error_result(
            ABORTED if config.signal.aborted and not str(error) else _message_of(error)
        )
        details = getattr(error, "details", None)
        if details is not None:
            result["details"] = details
        is_error = True
    duration_ms = (time.monotonic() - started) * 1000
    accepting = False
    if pump is not None:
        await pump
    if config.after_tool_call is not None:
        try:
            patch = await config.after_tool_call(
                call["id"],
                call["name"],
                prepared.args,
                result.get("content", []),
                result.get("details"),
                is_error,
            )
        except Exception as error:
            patch = None
            result, is_error = error_result(_message_of(error)), True
        if patch is not None and not is_error:  # a failed tool keeps its error
            patched = result.copy()
            if isinstance(patch.content, list):
                patched["content"] = patch.content
            from knightcode._plugins.results import UNCHANGED  # loaded: a plugin patched

            if patch.details is not UNCHANGED:
                patched["details"] = patch.details
            result = patched
            if isinstance(patch.is_error, bool):
                is_error = patch.is_error
    return Outcome(call, result, is_error, duration_ms)


async def emit_end(outcome: Outcome, emit: EmitFn) -> None:
    event: ToolExecutionEndEvent = {
        "type": "tool_execution_end",
        "toolCallId": outcome.call["id"],
        "toolName": outcome.call["name"],
        "result": outcome.result,
        "isError": outcome.is_error,
    }
    if outcome.duration_ms is not None:
        event["durationMs"] = round(outcome.duration_ms, 3)
    await emit(event)


def result_message(outcome: Outcome) -> ToolResultMessage:
    """The ``toolResult`` message recorded for a finished call."""
    message: ToolResultMessage = {
        "role": "toolResult",
        "toolCallId": outcome.call["id"],
        "toolName": outcome.call["name"],
        "content": outcome.result.get("content") or [],
        "isError": outcome.is_error,
        "timestamp": int(time.time() * 1000),
    }
    details = outcome.result.get("details")
    if details is not None:
        message["details"] = details
    return message


async def emit_start(call: ToolCall, emit: EmitFn) -> None:
    await emit(
        {
            "type": "tool_execution_start",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "args": call.get("arguments", {}),
        }
    )


async def _record(outcomes: list[Outcome], emit: EmitFn) -> list[ToolResultMessage]:
    messages = []
    for outcome in outcomes:
        message = result_message(outcome)
        await emit({"type": "message_start", "message": message})
        await emit({"type": "message_end", "message": message})
        messages.append(message)
    return messages


async def run_tool_calls(
    calls: list[ToolCall], config: LoopConfig, emit: EmitFn
) -> list[ToolResultMessage]:
    """Run ``calls`` (parallel unless a tool or the config asks otherwise); returns the
    ``toolResult`` messages in call order, each already emitted as message_start/message_end.
    """
    sequential = config.sequential or any(
        (tool := config.tools.get(call["name"])) is not None and tool.execution_mode == "sequential"
        for call in calls
    )
    outcomes: list[Outcome] = []
    if sequential:
        for call in calls:
            await emit_start(call, emit)
            prepared = await prepare(call, config)
            outcome = (
                prepared if isinstance(prepared, Outcome) else await execute(prepared, config, emit)
            )
            await emit_end(outcome, emit)
            outcomes.append(outcome)
            if config.signal.aborted:
                break
    else:
        # Every pre-flight check first, in call order; only then do the tools start (a slow
        # ``tool_call`` check, e.g. a confirmation, must not let earlier calls run meanwhile).
        slots: list[Outcome | Prepared] = []
        for call in calls:
            await emit_start(call, emit)
            prepared = await prepare(call, config)
            if isinstance(prepared, Outcome):
                await emit_end(prepared, emit)
            slots.append(prepared)
            if config.signal.aborted:
                break
        running = [
            slot
            if isinstance(slot, Outcome)
            else asyncio.ensure_future(_run_and_end(slot, config, emit))
            for slot in slots
        ]
        try:
            for item in running:
                outcomes.append(item if isinstance(item, Outcome) else await item)
        finally:
            # Cancelled (shutdown) or failed: the other calls end with us, not after us.
            await _cancel_all([item for item in running if isinstance(item, asyncio.Future)])
    return await _record(outcomes, emit)


async def _cancel_all(tasks: list[asyncio.Future[Outcome]]) -> None:
    """Cancel the tasks that are still running and wait until they have ended."""
    pending = [task for task in tasks if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending)


async def _run_and_end(prepared: Prepared, config: LoopConfig, emit: EmitFn) -> Outcome:
    if config.signal.aborted:
        outcome = Outcome(prepared.call, error_result(ABORTED), True)
    else:
        outcome = await execute(prepared, config, emit)
    await emit_end(outcome, emit)
    return outcome


async def fail_truncated_calls(calls: list[ToolCall], emit: EmitFn) -> list[ToolResultMessage]:
    """Tool calls of a response cut off by the output limit may carry truncated arguments:
    none is run, each gets an error result telling the model to re-issue it.
    """
    outcomes = []
    for call in calls:
        await emit_start(call, emit)
        outcome = Outcome(
            call,
            error_result(
                f'Tool call "{call["name"]}" was not executed: the response hit the output token '
                "limit, so its arguments may be truncated. Re-issue the tool call with complete "
                "arguments."
            ),
            True,
        )
        await emit_end(outcome, emit)
        outcomes.append(outcome)
    return await _record(outcomes, emit)
