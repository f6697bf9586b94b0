"""``AgentSession`` in process against the scripted server: event order, payloads, tool batches,
tool errors, the session file, model and thinking-level changes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from knightcode import LocalBackend
from knightcode._agent.session import AgentSession, AgentSessionOptions
from knightcode._session.manager import SessionManager
from knightcode.testing import reply, text_reply, tool_call, tool_call_reply, usage
from tests.harness import (
    MODEL,
    OTHER_MODEL,
    PROVIDER,
    SYSTEM_PROMPT,
    Builder,
    bounded,
    make_tool,
    result_text,
    text_of,
)


def ok(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "details": {"text": text}}


async def test_text_reply_exact_event_sequence(scenario: Builder) -> None:
    s = await scenario()
    s.server.add(text_reply("Hello", " world", usage=usage(input=12, output=2)))
    await bounded(s.agent.prompt("Say hello"))
    assert s.types() == [
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_update:text_start",
        "message_update:text_delta",
        "message_update:text_delta",
        "message_update:text_end",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    user, final = s.events[3]["message"], s.events[9]["message"]
    assert user["role"] == "user" and user["content"] == [{"type": "text", "text": "Say hello"}]
    assert (
        final["content"] == [{"type": "text", "text": "Hello world"}]
        and final["stopReason"] == "stop"
    )
    assert final["usage"]["input"] == 12 and (final["provider"], final["model"]) == (
        PROVIDER,
        MODEL,
    )
    # In process, message_update carries the cumulative message and the event's partial.
    update = s.events[6]
    assert update["assistantMessageEvent"]["delta"] == "Hello" and update["message"] is final
    assert s.events[10] == {"type": "turn_end", "message": final, "toolResults": []}
    assert s.events[11] == {"type": "agent_end", "messages": [user, final], "willRetry": False}
    assert s.events[12] == {"type": "agent_settled", "aborted": False}
    assert s.agent.messages == [user, final] and not s.agent.is_streaming
    sent = s.sent(0)
    assert sent[0] == {"role": "system", "content": s.agent.system_prompt}
    assert s.agent.system_prompt.startswith(SYSTEM_PROMPT)
    assert [m["role"] for m in sent[1:]] == ["user"] and text_of(sent[1]) == "Say hello"


async def test_tool_round_trip_exact_sequence_and_payloads(scenario: Builder) -> None:
    async def echo(call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> dict[str, Any]:
        on_update({"content": [{"type": "text", "text": "work"}], "details": {}})
        await asyncio.sleep(0)
        on_update({"content": [{"type": "text", "text": "working"}], "details": {}})
        return ok(f"echo {args['value']}")

    s = await scenario(tools=[make_tool("echo", echo)])
    s.server.add(
        tool_call_reply([tool_call("call_1", "echo", {"value": "hi"}, split=3)]),
        text_reply("All done."),
    )
    await bounded(s.agent.prompt("Use the tool"))
    assert s.types() == [
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_update:toolcall_start",
        "message_update:toolcall_delta",
        "message_update:toolcall_delta",
        "message_update:toolcall_delta",
        "message_update:toolcall_end",
        "message_end:assistant",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_update",
        "tool_execution_end",
        "message_start:toolResult",
        "message_end:toolResult",
        "turn_end",
        "turn_start",
        "message_start:assistant",
        "message_update:text_start",
        "message_update:text_delta",
        "message_update:text_end",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    start = s.of_type("tool_execution_start")[0]
    assert start == {
        "type": "tool_execution_start",
        "toolCallId": "call_1",
        "toolName": "echo",
        "args": {"value": "hi"},
    }
    updates = [text_of(e["partialResult"]) for e in s.of_type("tool_execution_update")]
    assert updates == ["work", "working"]
    end = s.of_type("tool_execution_end")[0]
    assert end["isError"] is False and end["result"] == ok("echo hi") and end["durationMs"] >= 0
    (result,) = s.tool_results()
    assert (
        result["toolCallId"] == "call_1"
        and result["toolName"] == "echo"
        and result["isError"] is False
    )
    assert result["content"] == [{"type": "text", "text": "echo hi"}] and result["details"] == {
        "text": "echo hi"
    }
    first_turn, second_turn = s.of_type("turn_end")
    calling = s.events[10]["message"]
    assert calling["stopReason"] == "toolUse"
    assert calling["content"] == [
        {"type": "toolCall", "id": "call_1", "name": "echo", "arguments": {"value": "hi"}}
    ]
    assert first_turn["message"] is calling and first_turn["toolResults"] == [result]
    assert text_of(second_turn["message"]) == "All done." and second_turn["toolResults"] == []
    (agent_end,) = s.of_type("agent_end")
    assert [m["role"] for m in agent_end["messages"]] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert agent_end["messages"][2] is result
    # The second request answered the call.
    sent = s.sent(1)
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[3]["tool_call_id"] == "call_1" and "echo hi" in json.dumps(sent[3])


async def test_parallel_tools_start_in_order_overlap_and_results_keep_call_order(
    scenario: Builder,
) -> None:
    running: dict[str, asyncio.Event] = {name: asyncio.Event() for name in "abc"}
    log: list[str] = []

    async def wait(call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> dict[str, Any]:
        me = args["value"]
        log.append(f"run:{me}")
        running[me].set()
        if me == "a":
            # "a" only finishes once "b" and "c" are running too: they must overlap.
            await asyncio.wait_for(asyncio.gather(running["b"].wait(), running["c"].wait()), 5)
        if me == "b":
            await asyncio.wait_for(running["c"].wait(), 5)
        log.append(f"done:{me}")
        return ok(me)

    s = await scenario(tools=[make_tool("wait", wait)])
    s.agent.subscribe(
        lambda e: (
            log.append(f"{e['type']}:{e['toolCallId']}")
            if e["type"] == "tool_execution_start"
            else None
        )
    )
    s.server.add(
        tool_call_reply([tool_call(f"id_{v}", "wait", {"value": v}) for v in "abc"]),
        text_reply("ok"),
    )
    await bounded(s.agent.prompt("three at once"))
    assert log[:3] == [
        "tool_execution_start:id_a",
        "tool_execution_start:id_b",
        "tool_execution_start:id_c",
    ]
    assert log[3:6] == ["run:a", "run:b", "run:c"]
    assert log[6:] == ["done:c", "done:b", "done:a"]
    assert [e["toolCallId"] for e in s.of_type("tool_execution_end")] == ["id_c", "id_b", "id_a"]
    assert [m["toolCallId"] for m in s.tool_results()] == ["id_a", "id_b", "id_c"]
    assert [m["tool_call_id"] for m in s.sent(1) if m["role"] == "tool"] == ["id_a", "id_b", "id_c"]


async def test_a_sequential_tool_makes_the_batch_sequential(scenario: Builder) -> None:
    spans: dict[str, tuple[float, float]] = {}
    loop = asyncio.get_running_loop()

    def tool(name: str, mode: str) -> Any:
        async def execute(
            call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
        ) -> dict[str, Any]:
            started = loop.time()
            for _ in range(10):
                await asyncio.sleep(0)
            await asyncio.sleep(0.01)
            spans[call_id] = (started, loop.time())
            return ok(call_id)

        return make_tool(name, execute, execution_mode=mode)

    s = await scenario(tools=[tool("locked", "sequential"), tool("free", "parallel")])
    s.server.add(
        tool_call_reply(
            [
                tool_call("c1", "free", {"value": "1"}),
                tool_call("c2", "locked", {"value": "2"}),
                tool_call("c3", "free", {"value": "3"}),
            ]
        ),
        text_reply("ok"),
    )
    await bounded(s.agent.prompt("go"))
    (a0, a1), (b0, b1), (c0, c1) = spans["c1"], spans["c2"], spans["c3"]
    assert a0 < a1 <= b0 < b1 <= c0 < c1  # no overlap at all
    kinds = [
        (e["type"], e["toolCallId"]) for e in s.events if e["type"].startswith("tool_execution")
    ]
    assert kinds == [
        ("tool_execution_start", "c1"),
        ("tool_execution_end", "c1"),
        ("tool_execution_start", "c2"),
        ("tool_execution_end", "c2"),
        ("tool_execution_start", "c3"),
        ("tool_execution_end", "c3"),
    ]


async def test_tool_failures_become_error_results(scenario: Builder) -> None:
    executed: list[Any] = []

    async def count(call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> dict[str, Any]:
        executed.append(args["n"])
        return ok(f"n={args['n']!r}")

    async def explode(
        call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
    ) -> dict[str, Any]:
        raise RuntimeError("the disk is on fire")

    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "label": {"type": "string"}},
        "required": ["n"],
    }
    s = await scenario(
        tools=[make_tool("count", count, parameters=schema), make_tool("explode", explode)]
    )
    s.server.add(
        tool_call_reply(
            [
                tool_call("u", "nope", {"x": 1}),
                tool_call("m", "count", {"label": "no n"}),
                tool_call("t", "count", {"n": "ten"}),
                tool_call("c", "count", {"n": "10"}),
                tool_call("e", "explode", {"value": "x"}),
            ]
        ),
        text_reply("understood"),
    )
    await bounded(s.agent.prompt("try everything"))
    ends = {e["toolCallId"]: e for e in s.of_type("tool_execution_end")}
    assert result_text(ends["u"]) == "Tool nope not found" and ends["u"]["isError"] is True
    assert ends["m"]["isError"] is True and "n: required" in result_text(ends["m"])
    assert result_text(ends["m"]).startswith("Invalid arguments for tool count")
    assert (
        ends["t"]["isError"] is True
        and "n: expected integer" in result_text(ends["t"])
        and '"ten"' in result_text(ends["t"])
    )
    assert ends["c"]["isError"] is False and result_text(ends["c"]) == "n=10"
    assert executed == [10] and isinstance(executed[0], int)
    assert ends["e"]["isError"] is True and result_text(ends["e"]) == "the disk is on fire"
    # durationMs only for tools that actually ran.
    assert {key for key, end in ends.items() if "durationMs" in end} == {"c", "e"}
    assert all(isinstance(ends[key]["durationMs"], (int, float)) for key in ("c", "e"))
    # The results reach the model in call order, errors flagged.
    results = s.tool_results()
    assert [(m["toolCallId"], m["isError"]) for m in results] == [
        ("u", True),
        ("m", True),
        ("t", True),
        ("c", False),
        ("e", True),
    ]
    assert [m["tool_call_id"] for m in s.sent(1) if m["role"] == "tool"] == [
        "u",
        "m",
        "t",
        "c",
        "e",
    ]
    # The run went on to the next turn.
    assert text_of(s.agent.messages[-1]) == "understood"


async def test_tool_updates_arrive_in_order_before_the_end(scenario: Builder) -> None:
    async def chatty(
        call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
    ) -> dict[str, Any]:
        for index in range(5):
            on_update(
                {
                    "content": [{"type": "text", "text": f"step {index}"}],
                    "details": {"index": index},
                }
            )
            if index % 2:
                await asyncio.sleep(0)
        return ok("finished")

    s = await scenario(tools=[make_tool("chatty", chatty)])
    s.server.add(tool_call_reply([tool_call("k", "chatty", {"value": "v"})]), text_reply("ok"))
    await bounded(s.agent.prompt("go"))
    tool_events = [e for e in s.events if e["type"].startswith("tool_execution")]
    assert [e["type"] for e in tool_events] == ["tool_execution_start"] + [
        "tool_execution_update"
    ] * 5 + ["tool_execution_end"]
    assert [e["partialResult"]["details"]["index"] for e in tool_events[1:-1]] == [0, 1, 2, 3, 4]
    assert all(e["toolCallId"] == "k" and e["toolName"] == "chatty" for e in tool_events)
    assert all(e["args"] == {"value": "v"} for e in tool_events[:-1])


async def test_builtin_bash_streams_partial_output(scenario: Builder) -> None:
    s = await scenario(builtin=["bash"])
    s.server.add(
        tool_call_reply([tool_call("b", "bash", {"command": "echo one; echo two"})]),
        text_reply("ok"),
    )
    await bounded(s.agent.prompt("run it"))
    kinds = [e["type"] for e in s.events if e["type"].startswith("tool_execution")]
    assert kinds[0] == "tool_execution_start" and kinds[-1] == "tool_execution_end"
    assert "tool_execution_update" in kinds
    end = s.of_type("tool_execution_end")[0]
    assert end["isError"] is False and result_text(end).split() == ["one", "two"]


async def test_length_stop_with_tool_calls_fails_them_without_running(scenario: Builder) -> None:
    executed: list[Any] = []

    async def echo(call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> dict[str, Any]:
        executed.append(args)
        return ok("ran")

    s = await scenario(tools=[make_tool("echo", echo)])
    s.server.add(
        reply(tool_calls=[tool_call("cut", "echo", {"value": "trunc"})], finish="length"),
        text_reply("let me retry"),
    )
    await bounded(s.agent.prompt("go"))
    assert executed == []
    assert (
        s.events[[e["type"] for e in s.events].index("message_end", 5)]["message"]["stopReason"]
        == "length"
    )
    (end,) = s.of_type("tool_execution_end")
    assert (
        end["isError"] is True
        and "output token limit" in result_text(end)
        and "durationMs" not in end
    )
    (result,) = s.tool_results()
    assert result["isError"] is True and result["toolCallId"] == "cut"
    assert len(s.requests) == 2 and text_of(s.agent.messages[-1]) == "let me retry"


async def test_every_message_reaches_the_session_file_as_it_completes(scenario: Builder) -> None:
    async def echo(call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> dict[str, Any]:
        return ok("echoed")

    s = await scenario(tools=[make_tool("echo", echo)], persist=True)
    snapshots: list[tuple[str, Any]] = []

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "message_end":
            lines = s.session_lines()
            snapshots.append(
                (event["message"]["role"], lines[-1].get("message") if lines else None)
            )

    s.agent.subscribe(on_event)
    s.server.add(tool_call_reply([tool_call("c1", "echo", {"value": "x"})]), text_reply("done"))
    await bounded(s.agent.prompt("first"))
    ends = [e["message"] for e in s.of_type("message_end")]
    # Nothing is written before the first assistant message (the lazy rule); from then on every
    # message is on disk by the time its message_end is published.
    assert snapshots[0] == ("user", None)
    assert [(role, line) for role, line in snapshots[1:]] == [(m["role"], m) for m in ends[1:]]
    lines = s.session_lines()
    assert lines[0]["type"] == "session" and lines[0]["cwd"] == str(s.project)
    kinds = [(e["type"], e.get("message", {}).get("role")) for e in lines[1:]]
    assert kinds == [
        ("model_change", None),
        ("thinking_level_change", None),
        ("message", "user"),
        ("message", "assistant"),
        ("message", "toolResult"),
        ("message", "assistant"),
    ]
    assert [e["message"] for e in lines if e["type"] == "message"] == ends
    # A second prompt appends at once (the file exists now).
    s.server.add(text_reply("again"))
    await bounded(s.agent.prompt("second"))
    assert (
        snapshots[-2][1] is not None
        and snapshots[-2][0] == "user"
        and text_of(snapshots[-2][1]) == "second"
    )
    assert text_of(s.session_lines()[-1]["message"]) == "again"


async def test_model_switch_is_recorded_and_used(scenario: Builder) -> None:
    s = await scenario(persist=True)
    other = await s.agent.model_registry.find(PROVIDER, OTHER_MODEL)
    assert other is not None
    s.server.add(text_reply("from the first"), text_reply("from the second"))
    await bounded(s.agent.prompt("one"))
    await s.agent.set_model(other)
    await s.agent.set_model(other)  # no change, no entry
    await bounded(s.agent.prompt("two"))
    assert [r.body["model"] for r in s.requests] == [MODEL, OTHER_MODEL]
    assert s.agent.messages[-1]["model"] == OTHER_MODEL
    changes = [
        (e["provider"], e["modelId"]) for e in s.session_lines() if e["type"] == "model_change"
    ]
    assert changes == [(PROVIDER, MODEL), (PROVIDER, OTHER_MODEL)]
    assert s.agent.session.build_context().model.model_id == OTHER_MODEL  # type: ignore[union-attr]


async def test_thinking_level_change_is_recorded_and_published(scenario: Builder) -> None:
    s = await scenario(persist=True, model=OTHER_MODEL)
    s.server.add(text_reply("a"), text_reply("b"))
    await bounded(s.agent.prompt("one"))
    await s.agent.set_thinking_level("high")
    await s.agent.set_thinking_level("high")  # unchanged: nothing
    await bounded(s.agent.prompt("two"))
    assert s.of_type("thinking_level_changed") == [
        {"type": "thinking_level_changed", "level": "high"}
    ]
    levels = [e["thinkingLevel"] for e in s.session_lines() if e["type"] == "thinking_level_change"]
    assert levels == ["medium", "high"]  # a reasoning model starts at the default, medium
    first, second = (r.body for r in s.requests)
    assert first.get("reasoning_effort") == "medium" and second.get("reasoning_effort") == "high"


async def test_reopened_session_records_only_what_changed(scenario: Builder) -> None:
    s = await scenario(persist=True)
    s.server.add(text_reply("a"), text_reply("b"))
    await bounded(s.agent.prompt("one"))
    path = s.agent.session.session_file
    assert path is not None
    s.agent.session.close()
    reopened = SessionManager.open(path)
    again = AgentSession(
        AgentSessionOptions(
            cwd=s.project,
            agent_dir=s.agent_dir,
            session=reopened,
            models=s.agent.model_registry,
            model=s.agent.model,
            tools={},
            system_prompt="x",
            backend=LocalBackend(s.project),
            thinking_level="low",
        )
    )
    try:
        assert [m["role"] for m in again.messages] == ["user", "assistant"]
        await bounded(again.prompt("two"))
        kinds = [e["type"] for e in s.session_lines()[1:]]
        assert kinds.count("model_change") == 1 and kinds.count("thinking_level_change") == 2
        assert [m["role"] for m in s.sent(1)] == ["system", "user", "assistant", "user"]
    finally:
        reopened.close()


async def test_a_second_prompt_after_the_first_completes(scenario: Builder) -> None:
    s = await scenario()
    s.server.add(text_reply("Done"), text_reply("Again"))
    await bounded(s.agent.prompt("First message"))
    assert s.agent.is_streaming is False
    await bounded(s.agent.prompt("Second message"))
    assert [text_of(m) for m in s.agent.messages] == [
        "First message",
        "Done",
        "Second message",
        "Again",
    ]
    assert s.types().count("agent_settled") == 2
