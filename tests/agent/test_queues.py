"""Steering and follow-up queues: delivery points, modes, ``queue_update`` events, and prompts that
arrive while the agent is busy (the reference's agent-session-concurrent cases)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from knightcode import content_text
from knightcode._agent.queues import MessageQueues
from knightcode._agent.session import AgentBusyError
from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.harness import (
    Builder,
    Scenario,
    bounded,
    make_tool,
    text_of,
)

BUSY = (
    "Agent is already processing. "
    "Specify streamingBehavior ('steer' or 'followUp') to queue the message."
)


def acting_tool(
    action: Callable[[Scenario], Any], holder: list[Scenario], name: str = "act"
) -> Any:
    """A tool that runs ``action(scenario)`` while it executes (e.g. queues a message)."""

    async def execute(
        call_id: str, args: dict[str, Any], ctx: Any, on_update: Any
    ) -> dict[str, Any]:
        result = action(holder[0])
        if asyncio.iscoroutine(result):
            await result
        return {"content": [{"type": "text", "text": f"{name} done"}], "details": {}}

    return make_tool(name, execute)


def queue_updates(s: Scenario) -> list[tuple[list[str], list[str]]]:
    return [(e["steering"], e["followUp"]) for e in s.of_type("queue_update")]


def message_starts(s: Scenario) -> list[str]:
    out = []
    for event in s.of_type("message_start"):
        message = event["message"]
        if message["role"] == "user":
            out.append(f"user:{text_of(message)}")
        elif message["role"] == "toolResult":
            out.append(f"tool:{message['toolCallId']}")
        else:
            out.append(message["role"])
    return out


async def test_steer_during_a_tool_batch_is_delivered_after_the_batch(scenario: Builder) -> None:
    holder: list[Scenario] = []
    s = await scenario(
        tools=[
            acting_tool(lambda sc: sc.agent.steer("change course"), holder),
            acting_tool(lambda sc: None, holder, name="other"),
        ]
    )
    holder.append(s)
    s.server.add(
        tool_call_reply(
            [tool_call("t1", "act", {"value": "1"}), tool_call("t2", "other", {"value": "2"})]
        ),
        text_reply("steered"),
    )
    await bounded(s.agent.prompt("start"))
    # Both tools of the batch ran (no skipping), then the steering message, then the next request.
    assert message_starts(s) == [
        "user:start",
        "assistant",
        "tool:t1",
        "tool:t2",
        "user:change course",
        "assistant",
    ]
    assert [e["isError"] for e in s.of_type("tool_execution_end")] == [False, False]
    sent = s.sent(1)
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert text_of(sent[-1]) == "change course"
    assert "change course" not in s.sent_user_texts(0)
    # Delivered within the same run, as a new turn.
    assert s.types().count("agent_start") == 1 and s.types().count("turn_start") == 2
    assert queue_updates(s) == [(["change course"], []), ([], [])]
    assert s.agent.queues.pending == 0


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_steering_modes(scenario: Builder, mode: str) -> None:
    holder: list[Scenario] = []

    def steer_twice(sc: Scenario) -> None:
        sc.agent.steer("s1")
        sc.agent.steer("s2")

    s = await scenario(tools=[acting_tool(steer_twice, holder)], steering_mode=mode)  # type: ignore[arg-type]
    holder.append(s)
    s.server.add(
        tool_call_reply([tool_call("t1", "act", {"value": "1"})]),
        text_reply("r1"),
        text_reply("r2"),
    )
    await bounded(s.agent.prompt("start"))
    if mode == "one-at-a-time":
        assert len(s.requests) == 3
        assert s.sent_user_texts(1) == ["start", "s1"] and s.sent_user_texts(2) == [
            "start",
            "s1",
            "s2",
        ]
        assert queue_updates(s) == [(["s1"], []), (["s1", "s2"], []), (["s2"], []), ([], [])]
        assert s.types().count("turn_start") == 3
    else:
        assert len(s.requests) == 2
        assert s.sent_user_texts(1) == ["start", "s1", "s2"]
        assert queue_updates(s) == [(["s1"], []), (["s1", "s2"], []), ([], [])]
    assert s.types().count("agent_start") == 1 and s.agent.queues.pending == 0


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_follow_up_only_when_the_agent_would_stop(scenario: Builder, mode: str) -> None:
    holder: list[Scenario] = []

    def queue(sc: Scenario) -> None:
        sc.agent.follow_up("f1")
        sc.agent.follow_up("f2")

    s = await scenario(tools=[acting_tool(queue, holder)], follow_up_mode=mode)  # type: ignore[arg-type]
    holder.append(s)
    s.server.add(
        tool_call_reply([tool_call("t1", "act", {"value": "1"})]),
        text_reply("answer"),
        text_reply("after f1"),
        text_reply("after f2"),
    )
    await bounded(s.agent.prompt("start"))
    # The turn after the tools does not see them: the agent had more to do.
    assert s.sent_user_texts(1) == ["start"]
    if mode == "one-at-a-time":
        assert s.sent_user_texts(2) == ["start", "f1"] and s.sent_user_texts(3) == [
            "start",
            "f1",
            "f2",
        ]
        assert s.server.pending == 0
    else:
        assert s.sent_user_texts(2) == ["start", "f1", "f2"] and len(s.requests) == 3
    answer_end = next(
        i
        for i, e in enumerate(s.events)
        if e["type"] == "message_end" and text_of(e["message"]) == "answer"
    )
    f1_start = next(
        i
        for i, e in enumerate(s.events)
        if e["type"] == "message_start" and text_of(e["message"]) == "f1"
    )
    assert answer_end < f1_start
    assert s.types().count("agent_start") == 1 and s.types().count("agent_settled") == 1


async def test_steering_beats_follow_up_and_queue_updates_carry_full_queues(
    scenario: Builder,
) -> None:
    holder: list[Scenario] = []

    def queue(sc: Scenario) -> None:
        sc.agent.steer("a")
        sc.agent.follow_up("b")
        sc.agent.steer("c")

    s = await scenario(tools=[acting_tool(queue, holder)], steering_mode="all")
    holder.append(s)
    s.server.add(
        tool_call_reply([tool_call("t1", "act", {"value": "1"})]),
        text_reply("r1"),
        text_reply("r2"),
    )
    await bounded(s.agent.prompt("start"))
    assert queue_updates(s) == [
        (["a"], []),
        (["a"], ["b"]),
        (["a", "c"], ["b"]),
        ([], ["b"]),
        ([], []),
    ]
    assert s.sent_user_texts(1) == ["start", "a", "c"]
    assert s.sent_user_texts(2) == ["start", "a", "c", "b"]


async def test_prompt_while_busy_raises_or_queues(scenario: Builder) -> None:
    started, gate = asyncio.Event(), asyncio.Event()

    async def block(call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> dict[str, Any]:
        started.set()
        await gate.wait()
        return {"content": [{"type": "text", "text": "released"}], "details": {}}

    s = await scenario(tools=[make_tool("block", block)])
    s.server.add(
        tool_call_reply([tool_call("t1", "block", {"value": "1"})]),
        text_reply("r1"),
        text_reply("r2"),
    )
    first = asyncio.ensure_future(s.agent.prompt("First message"))
    await bounded(started.wait())
    assert s.agent.is_streaming is True
    with pytest.raises(AgentBusyError) as raised:
        await s.agent.prompt("Second message")
    assert str(raised.value) == BUSY
    await s.agent.prompt("Steering message", streaming_behavior="steer")
    await s.agent.prompt("Follow-up message", streaming_behavior="followUp")
    assert s.agent.queues.pending == 2
    assert queue_updates(s)[-1] == (["Steering message"], ["Follow-up message"])
    gate.set()
    await bounded(first)
    assert s.sent_user_texts(1) == ["First message", "Steering message"]
    assert s.sent_user_texts(2) == ["First message", "Steering message", "Follow-up message"]
    assert "Second message" not in [text_of(m) for m in s.agent.messages]
    assert s.agent.is_streaming is False and s.agent.queues.pending == 0


async def test_abort_leaves_queued_messages_queued(scenario: Builder) -> None:
    holder: list[Scenario] = []

    def steer_and_abort(sc: Scenario) -> None:
        sc.agent.steer("not now")
        sc.agent.follow_up("nor later")
        sc.agent.abort()

    s = await scenario(tools=[acting_tool(steer_and_abort, holder)])
    holder.append(s)
    s.server.add(
        tool_call_reply([tool_call("t1", "act", {"value": "1"})]), text_reply("never sent")
    )
    await bounded(s.agent.prompt("start"))
    assert len(s.requests) == 1
    assert [content_text(m["content"]) for m in s.agent.queues.steering] == ["not now"]
    assert [content_text(m["content"]) for m in s.agent.queues.follow_up] == ["nor later"]
    assert s.of_type("agent_settled") == [{"type": "agent_settled", "aborted": True}]


# --- MessageQueues on its own ---------------------------------------------------------------


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 0}


def test_queue_modes_take_one_or_all_and_report_changes() -> None:
    changes: list[tuple[list[str], list[str]]] = []
    queues = MessageQueues(lambda steering, follow: changes.append((steering, follow)))
    assert queues.take_steering() == [] and changes == []  # empty take: no event
    queues.add_steering(user("a"))
    queues.add_steering(user("b"))
    queues.add_follow_up(user("c"))
    assert queues.pending == 3
    assert [m["content"] for m in queues.take_steering()] == ["a"]
    queues.steering_mode = "all"
    assert [m["content"] for m in queues.take_steering()] == ["b"]
    queues.add_follow_up(user("d"))
    queues.follow_up_mode = "all"
    assert [m["content"] for m in queues.take_follow_up()] == ["c", "d"]
    assert changes == [
        (["a"], []),
        (["a", "b"], []),
        (["a", "b"], ["c"]),
        (["b"], ["c"]),
        ([], ["c"]),
        ([], ["c", "d"]),
        ([], []),
    ]


def test_queue_clear_returns_steering_first() -> None:
    changes: list[Any] = []
    queues = MessageQueues(lambda s, f: changes.append((s, f)))
    queues.add_follow_up(user("f"))
    queues.add_steering(user("s"))
    assert [m["content"] for m in queues.clear()] == ["s", "f"]
    assert queues.pending == 0 and changes[-1] == ([], [])
    count = len(changes)
    assert queues.clear() == [] and len(changes) == count


def test_content_text_joins_text_blocks_only() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look "},
            {"type": "image", "data": "x", "mimeType": "image/png"},
            {"type": "text", "text": "here"},
        ],
    }
    assert content_text(message["content"]) == "look here"
    assert content_text(user("plain")["content"]) == "plain"
