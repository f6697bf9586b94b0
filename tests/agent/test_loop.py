"""The turn loop on its own (``run_agent_loop`` / ``run_agent_loop_continue``) with a scripted
stream function: the cases of the reference's ``packages/agent/test/agent-loop.test.ts``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from knightcode import AbortSignal, ToolResultPatch
from knightcode._agent.loop import run_agent_loop, run_agent_loop_continue
from knightcode._agent.loop_types import LoopConfig, TurnInfo
from knightcode._plugins.definitions import ToolDefinition
from tests.harness import make_tool, text_of

Message = dict[str, Any]


def usage() -> dict[str, Any]:
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def assistant(content: list[dict[str, Any]] | str, stop: str = "stop", **extra: Any) -> Message:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    return {
        "role": "assistant",
        "content": blocks,
        "api": "test",
        "provider": "test",
        "model": "mock",
        "usage": usage(),
        "stopReason": stop,
        "timestamp": int(time.time() * 1000),
        **extra,
    }


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def user(text: str) -> Message:
    return {"role": "user", "content": text, "timestamp": int(time.time() * 1000)}


class Script:
    """A stream function answering each request with the next scripted message (``start`` then
    ``done``/``error``); records the messages every request was made with."""

    def __init__(self, *replies: Message) -> None:
        self.replies = list(replies)
        self.seen: list[list[Message]] = []

    async def __call__(
        self, messages: list[Message], tools: Mapping[str, ToolDefinition]
    ) -> AsyncIterator[dict[str, Any]]:
        self.seen.append(list(messages))
        assert self.replies, "the script ran out"
        message = self.replies.pop(0)
        partial = {**message, "content": [], "stopReason": "pending"}
        yield {"type": "start", "partial": partial}
        if message["stopReason"] in ("error", "aborted"):
            yield {"type": "error", "reason": message["stopReason"], "error": message}
        else:
            yield {"type": "done", "reason": message["stopReason"], "message": message}

    @property
    def calls(self) -> int:
        return len(self.seen)


class Recorder:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.log: list[str] = []

    async def __call__(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if event["type"].startswith("tool_execution"):
            self.log.append(f"{event['type']}:{event['toolCallId']}")

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]


def config(stream: Script, tools: list[ToolDefinition] = (), **kwargs: Any) -> LoopConfig:  # type: ignore[assignment]
    return LoopConfig(
        stream=stream,
        tools={t.name: t for t in tools},
        signal=AbortSignal(),
        tool_context=lambda call_id, tool: None,
        **kwargs,
    )


def echo_tool(executed: list[Any] | None = None, **kwargs: Any) -> ToolDefinition:
    async def execute(
        call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
    ) -> dict[str, Any]:
        if executed is not None:
            executed.append(args["value"])
        return {
            "content": [{"type": "text", "text": f"echoed: {args['value']}"}],
            "details": {"value": args["value"]},
        }

    return make_tool("echo", execute, **kwargs)


async def test_text_reply_event_sequence_and_result() -> None:
    stream = Script(assistant("Hi there!"))
    recorder = Recorder()
    context: list[Message] = []
    prompt = user("Hello")
    produced = await run_agent_loop([prompt], context, config(stream), recorder)
    assert recorder.types() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert [m["role"] for m in produced] == ["user", "assistant"]
    assert produced[0] is prompt and text_of(produced[1]) == "Hi there!"
    assert context == produced  # the context was extended in place
    assert recorder.of("turn_end")[0] == {
        "type": "turn_end",
        "message": produced[1],
        "toolResults": [],
    }
    assert recorder.of("agent_end")[0]["messages"] == produced
    # The partial message is replaced by the final one in the context.
    assert recorder.of("message_start")[1]["message"]["stopReason"] == "pending"


async def test_transform_context_prunes_what_the_model_sees_but_not_the_context() -> None:
    context = [
        user("old 1"),
        assistant("old response 1"),
        user("old 2"),
        assistant("old response 2"),
    ]

    async def keep_last_two(messages: list[Message]) -> list[Message]:
        return messages[-2:]

    stream = Script(assistant("Response"))
    await run_agent_loop(
        [user("new message")], context, config(stream, transform_context=keep_last_two), Recorder()
    )
    assert [text_of(m) for m in stream.seen[0]] == ["old response 2", "new message"]
    assert len(context) == 6


async def test_tool_call_and_result_with_after_tool_call_patch() -> None:
    executed: list[Any] = []
    seen_by_hook: list[Any] = []

    async def after(
        call_id: str, name: str, args: dict[str, Any], content: Any, details: Any, is_error: bool
    ) -> ToolResultPatch:
        seen_by_hook.append((call_id, name, args, details, is_error))
        return ToolResultPatch(content=[{"type": "text", "text": "patched"}])

    stream = Script(
        assistant([call("tool-1", "echo", value="hello")], "toolUse"), assistant("done")
    )
    recorder = Recorder()
    produced = await run_agent_loop(
        [user("echo something")],
        [],
        config(stream, [echo_tool(executed)], after_tool_call=after),
        recorder,
    )
    assert executed == ["hello"]
    (end,) = recorder.of("tool_execution_end")
    assert end["isError"] is False and end["result"]["content"] == [
        {"type": "text", "text": "patched"}
    ]
    assert seen_by_hook == [("tool-1", "echo", {"value": "hello"}, {"value": "hello"}, False)]
    result = next(m for m in produced if m["role"] == "toolResult")
    assert result["content"] == [{"type": "text", "text": "patched"}] and result["details"] == {
        "value": "hello"
    }
    assert [m["role"] for m in produced] == ["user", "assistant", "toolResult", "assistant"]
    # The second request answered the tool call.
    assert [m["role"] for m in stream.seen[1]] == ["user", "assistant", "toolResult"]


async def test_length_truncated_tool_calls_are_not_executed() -> None:
    executed: list[Any] = []
    stream = Script(assistant([call("tool-1", "echo", value="hel")], "length"), assistant("done"))
    recorder = Recorder()
    produced = await run_agent_loop(
        [user("echo something")], [], config(stream, [echo_tool(executed)]), recorder
    )
    assert executed == []
    (end,) = recorder.of("tool_execution_end")
    assert end["isError"] is True and "output token limit" in text_of(end["result"])
    assert "durationMs" not in end
    # The loop goes on so the model can re-issue the call.
    assert stream.calls == 2 and produced[-1]["role"] == "assistant"
    assert recorder.log == ["tool_execution_start:tool-1", "tool_execution_end:tool-1"]


async def test_before_tool_call_may_mutate_arguments_without_revalidation() -> None:
    executed: list[Any] = []

    async def before(call_id: str, name: str, args: dict[str, Any]) -> None:
        args["value"] = 123

    stream = Script(
        assistant([call("tool-1", "echo", value="hello")], "toolUse"), assistant("done")
    )
    await run_agent_loop(
        [user("x")], [], config(stream, [echo_tool(executed)], before_tool_call=before), Recorder()
    )
    assert executed == [123]


async def test_prepare_arguments_runs_before_validation() -> None:
    executed: list[Any] = []
    schema = {
        "type": "object",
        "required": ["edits"],
        "additionalProperties": False,
        "properties": {
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["oldText", "newText"],
                    "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                },
            }
        },
    }

    def prepare(args: Any) -> Any:
        if (
            isinstance(args, dict)
            and isinstance(args.get("oldText"), str)
            and isinstance(args.get("newText"), str)
        ):
            return {
                "edits": [
                    *args.get("edits", []),
                    {"oldText": args["oldText"], "newText": args["newText"]},
                ]
            }
        return args

    async def execute(
        call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
    ) -> dict[str, Any]:
        executed.append(args["edits"])
        return {
            "content": [{"type": "text", "text": f"edited {len(args['edits'])}"}],
            "details": {},
        }

    tool = ToolDefinition("edit", "edit", schema, execute, prepare_arguments=prepare)
    stream = Script(
        assistant([call("tool-1", "edit", oldText="before", newText="after")], "toolUse"),
        assistant("done"),
    )
    recorder = Recorder()
    await run_agent_loop([user("x")], [], config(stream, [tool]), recorder)
    assert executed == [[{"oldText": "before", "newText": "after"}]]
    assert recorder.of("tool_execution_end")[0]["isError"] is False


async def test_parallel_ends_in_completion_order_results_in_call_order() -> None:
    second_started = asyncio.Event()
    order: list[str] = []

    async def execute(
        call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
    ) -> dict[str, Any]:
        order.append(f"start:{args['value']}")
        if args["value"] == "first":
            # Only finishes once the second call is running: impossible unless they overlap.
            await asyncio.wait_for(second_started.wait(), 5)
        else:
            second_started.set()
        order.append(f"end:{args['value']}")
        return {"content": [{"type": "text", "text": args["value"]}], "details": {}}

    stream = Script(
        assistant(
            [call("tool-1", "echo", value="first"), call("tool-2", "echo", value="second")],
            "toolUse",
        ),
        assistant("done"),
    )
    recorder = Recorder()
    await run_agent_loop([user("both")], [], config(stream, [make_tool("echo", execute)]), recorder)
    assert order == ["start:first", "start:second", "end:second", "end:first"]
    assert [e["toolCallId"] for e in recorder.of("tool_execution_end")] == ["tool-2", "tool-1"]
    results = [
        e["message"]["toolCallId"]
        for e in recorder.of("message_end")
        if e["message"]["role"] == "toolResult"
    ]
    assert results == ["tool-1", "tool-2"]
    assert [r["toolCallId"] for r in recorder.of("turn_end")[0]["toolResults"]] == [
        "tool-1",
        "tool-2",
    ]
    assert all(e["isError"] is False for e in recorder.of("tool_execution_end"))


async def test_parallel_batch_runs_every_preflight_before_any_tool_executes() -> None:
    """All ``tool_execution_start`` events and ``tool_call`` checks come first, in call order; only
    then do the tools run (a slow check, e.g. a confirmation prompt, must not let earlier calls
    start executing)."""
    log: list[str] = []

    async def before(call_id: str, name: str, args: dict[str, Any]) -> None:
        log.append(f"check:{call_id}")
        for _ in range(5):
            await asyncio.sleep(0)  # a check that really suspends

    async def execute(
        call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
    ) -> dict[str, Any]:
        log.append(f"execute:{call_id}")
        return {"content": [{"type": "text", "text": "ok"}], "details": {}}

    recorder = Recorder()

    async def emit(event: dict[str, Any]) -> None:
        await recorder(event)
        if event["type"] == "tool_execution_start":
            log.append(f"start:{event['toolCallId']}")

    stream = Script(
        assistant(
            [
                call("a", "echo", value="1"),
                call("b", "echo", value="2"),
                call("c", "echo", value="3"),
            ],
            "toolUse",
        ),
        assistant("done"),
    )
    await run_agent_loop(
        [user("x")], [], config(stream, [make_tool("echo", execute)], before_tool_call=before), emit
    )
    assert log[:6] == ["start:a", "check:a", "start:b", "check:b", "start:c", "check:c"]
    assert sorted(log[6:]) == ["execute:a", "execute:b", "execute:c"]


async def test_steering_is_injected_after_all_tool_calls_complete() -> None:
    executed: list[Any] = []
    delivered = False

    def get_steering() -> list[Message]:
        nonlocal delivered
        if executed and not delivered:
            delivered = True
            return [user("interrupt")]
        return []

    stream = Script(
        assistant(
            [call("tool-1", "echo", value="first"), call("tool-2", "echo", value="second")],
            "toolUse",
        ),
        assistant("done"),
    )
    recorder = Recorder()
    await run_agent_loop(
        [user("start")],
        [],
        config(stream, [echo_tool(executed)], sequential=True, get_steering=get_steering),
        recorder,
    )
    assert executed == ["first", "second"]
    assert all(e["isError"] is False for e in recorder.of("tool_execution_end"))
    sequence = []
    for event in recorder.of("message_start"):
        message = event["message"]
        if message["role"] == "toolResult":
            sequence.append(f"tool:{message['toolCallId']}")
        elif message["role"] == "user":
            sequence.append(message["content"])
    assert sequence == ["start", "tool:tool-1", "tool:tool-2", "interrupt"]
    assert "interrupt" in [text_of(m) for m in stream.seen[1] if m["role"] == "user"]


async def test_sequential_tool_forces_the_whole_batch_sequential() -> None:
    order: list[str] = []

    def tool(name: str, mode: str) -> ToolDefinition:
        async def execute(
            call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
        ) -> dict[str, Any]:
            order.append(f"start:{name}:{args['value']}")
            for _ in range(5):
                await asyncio.sleep(0)  # give a concurrent call every chance to start
            order.append(f"end:{name}:{args['value']}")
            return {"content": [{"type": "text", "text": "ok"}], "details": {}}

        return make_tool(name, execute, execution_mode=mode)

    stream = Script(
        assistant(
            [
                call("tool-1", "slow", value="a"),
                call("tool-2", "fast", value="b"),
                call("tool-3", "fast", value="c"),
            ],
            "toolUse",
        ),
        assistant("done"),
    )
    recorder = Recorder()
    await run_agent_loop(
        [user("x")],
        [],
        config(stream, [tool("slow", "sequential"), tool("fast", "parallel")]),
        recorder,
    )
    assert order == [
        "start:slow:a",
        "end:slow:a",
        "start:fast:b",
        "end:fast:b",
        "start:fast:c",
        "end:fast:c",
    ]
    assert recorder.log == [
        "tool_execution_start:tool-1",
        "tool_execution_end:tool-1",
        "tool_execution_start:tool-2",
        "tool_execution_end:tool-2",
        "tool_execution_start:tool-3",
        "tool_execution_end:tool-3",
    ]

    # The same calls without the sequential tool overlap.
    order.clear()
    stream = Script(
        assistant(
            [call("tool-2", "fast", value="b"), call("tool-3", "fast", value="c")], "toolUse"
        ),
        assistant("done"),
    )
    await run_agent_loop([user("x")], [], config(stream, [tool("fast", "parallel")]), Recorder())
    assert order[:2] == ["start:fast:b", "start:fast:c"]


async def test_prepare_next_turn_runs_between_turns_only() -> None:
    turns: list[TurnInfo] = []
    roles_then: list[list[str]] = []

    async def prepare(turn: TurnInfo) -> None:
        turns.append(turn)
        roles_then.append([m["role"] for m in turn.context])

    stream = Script(
        assistant([call("tool-1", "echo", value="hello")], "toolUse"), assistant("done")
    )
    recorder = Recorder()
    await run_agent_loop(
        [user("x")], [], config(stream, [echo_tool()], prepare_next_turn=prepare), recorder
    )
    assert len(turns) == 1
    assert turns[0].message["stopReason"] == "toolUse"
    assert [r["toolCallId"] for r in turns[0].tool_results] == ["tool-1"]
    assert roles_then == [["user", "assistant", "toolResult"]]
    assert recorder.types().count("turn_start") == 2


async def test_follow_up_is_only_taken_when_the_agent_would_stop() -> None:
    polls: list[int] = []
    queued = [user("follow up")]

    def get_follow_up() -> list[Message]:
        polls.append(stream.calls)
        return [queued.pop()] if queued else []

    stream = Script(
        assistant([call("tool-1", "echo", value="v")], "toolUse"),
        assistant("first answer"),
        assistant("second answer"),
    )
    recorder = Recorder()
    produced = await run_agent_loop(
        [user("x")], [], config(stream, [echo_tool()], get_follow_up=get_follow_up), recorder
    )
    # Polled once after the model stopped (2 requests made), then again after answering it.
    assert polls == [2, 3]
    assert [m["role"] for m in produced] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]
    assert text_of(produced[4]) == "follow up"
    assert recorder.types().count("agent_start") == 1 and recorder.types().count("agent_end") == 1


async def test_an_error_reply_ends_the_run_without_running_its_tools() -> None:
    executed: list[Any] = []
    failed = assistant([call("tool-1", "echo", value="v")], "error", errorMessage="boom")
    stream = Script(failed)
    recorder = Recorder()
    produced = await run_agent_loop(
        [user("x")], [], config(stream, [echo_tool(executed)]), recorder
    )
    assert executed == [] and stream.calls == 1
    assert recorder.types()[-3:] == ["message_end", "turn_end", "agent_end"]
    assert recorder.of("turn_end")[0]["toolResults"] == []
    assert produced[-1]["stopReason"] == "error"


async def test_tool_timeout_default_and_per_call_override() -> None:
    schema = {
        "type": "object",
        "properties": {"value": {"type": "string"}, "timeout": {"type": "number"}},
    }
    never = asyncio.Event()

    async def execute(
        call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
    ) -> dict[str, Any]:
        if args["value"] == "hang":
            await never.wait()
        else:
            await asyncio.sleep(0.15)  # longer than the 50 ms default
        return {"content": [{"type": "text", "text": "finished"}], "details": {}}

    tool = make_tool("echo", execute, parameters=schema)
    stream = Script(
        assistant(
            [call("t1", "echo", value="hang"), call("t2", "echo", value="slow", timeout=0)],
            "toolUse",
        ),
        assistant("done"),
    )
    recorder = Recorder()
    await run_agent_loop([user("x")], [], config(stream, [tool], tool_timeout_ms=50), recorder)
    ends = {e["toolCallId"]: e for e in recorder.of("tool_execution_end")}
    assert ends["t1"]["isError"] is True and 'Tool "echo" timed out' in text_of(
        ends["t1"]["result"]
    )
    assert ends["t2"]["isError"] is False and text_of(ends["t2"]["result"]) == "finished"


async def test_continue_refuses_an_empty_context_or_a_trailing_assistant() -> None:
    stream = Script()
    with pytest.raises(ValueError, match="Cannot continue: no messages in context"):
        await run_agent_loop_continue([], config(stream), Recorder())
    with pytest.raises(ValueError, match="Cannot continue from message role: assistant"):
        await run_agent_loop_continue([user("x"), assistant("y")], config(stream), Recorder())
    assert stream.calls == 0


async def test_continue_from_existing_context_emits_no_user_events() -> None:
    stream = Script(assistant("Response"))
    recorder = Recorder()
    context = [user("Hello")]
    produced = await run_agent_loop_continue(context, config(stream), recorder)
    assert [m["role"] for m in produced] == ["assistant"]
    assert [e["message"]["role"] for e in recorder.of("message_end")] == ["assistant"]
    assert recorder.types()[:2] == ["agent_start", "turn_start"]


async def test_continue_accepts_a_custom_message_last() -> None:
    custom = {
        "role": "custom",
        "customType": "hook",
        "content": "Hook content",
        "display": True,
        "timestamp": int(time.time() * 1000),
    }
    stream = Script(assistant("Response to custom message"))
    produced = await run_agent_loop_continue([custom], config(stream), Recorder())
    assert [m["role"] for m in produced] == ["assistant"]
    assert stream.seen[0] == [custom]
