"""Prompting over RPC: a whole run with tool calls, steering, follow-ups, abort, state."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from knightcode.rpc import RpcError
from knightcode.testing import text_reply, tool_call, tool_call_reply, usage
from tests.harness import types_of

from .conftest import CONTEXT_WINDOW, MODEL, OTHER_MODEL, PROVIDER, Rpc, is_type, roles, text_of


async def test_whole_prompt_with_tool_calls(rpc: Rpc) -> None:
    (rpc.project / "notes.txt").write_text("alpha\nbeta\n")
    rpc.server.add(
        tool_call_reply([tool_call("call_1", "read", {"path": "notes.txt"}, split=2)]),
        text_reply("It says", " alpha and beta.", usage=usage(input=120, output=8)),
    )
    client = await rpc.start()
    mark = client.mark()
    response = await client.send({"id": "p1", "type": "prompt", "message": "What is in notes.txt?"})
    assert response == {"id": "p1", "type": "response", "command": "prompt", "success": True}
    streamed = []
    async for event in client.events(since=mark):
        streamed.append(event)
        if event["type"] == "agent_settled":
            break
    records = client.history[mark:]
    assert streamed == records
    assert types_of(records) == [
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_update:toolcall_start",
        "message_update:toolcall_delta",
        "message_update:toolcall_delta",
        "message_update:toolcall_end",
        "message_end:assistant",
        "tool_execution_start",
        "tool_execution_end",
        "message_start:toolResult",
        "message_end:toolResult",
        "turn_end",
        "turn_start",
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
    assert records[11]["result"]["content"] == [{"type": "text", "text": "alpha\nbeta\n"}]
    assert all(
        "partial" not in r["assistantMessageEvent"]
        for r in records
        if r["type"] == "message_update"
    )
    assert records[-1] == {"type": "agent_settled", "aborted": False}
    assert await client.get_last_assistant_text() == "It says alpha and beta."
    messages = await client.get_messages()
    assert roles(messages) == ["user", "assistant", "toolResult", "assistant"]
    # The tool result went back to the model.
    assert "alpha" in str(rpc.server.requests[1].body["messages"][-1])


async def test_prompt_response_precedes_the_events_of_its_run(rpc: Rpc) -> None:
    rpc.server.add(text_reply("hi"))
    client = await rpc.start()
    mark = client.mark()
    raw = b'{"type":"prompt","message":"hello","id":"raw-1"}\n'
    await client.send_raw(raw)
    await client.wait_for(is_type("agent_settled"), since=mark)
    first, second = client.history[mark], client.history[mark + 1]
    assert first == {"id": "raw-1", "type": "response", "command": "prompt", "success": True}
    assert second == {"type": "agent_start"}


async def test_state_while_streaming_steer_and_follow_up(rpc: Rpc) -> None:
    rpc.server.add(
        rpc.gate_reply(),
        text_reply("first steer"),
        text_reply("second steer"),
        text_reply("follow-up"),
    )
    client = await rpc.start()
    mark = client.mark()
    await client.prompt("start")
    await client.wait_for(is_type("tool_execution_start"), since=mark)

    state = await client.get_state()
    assert state["isStreaming"] is True and state["pendingMessageCount"] == 0
    with pytest.raises(RpcError, match="Agent is already processing"):
        await client.prompt("not queued")
    await client.steer("change course")
    await client.follow_up("and then this")
    await client.prompt("also steer", streaming_behavior="steer")
    state = await client.get_state()
    assert state["pendingMessageCount"] == 3 and state["isStreaming"] is True
    update = await client.wait_for(
        lambda r: r["type"] == "queue_update" and len(r["steering"]) == 2, since=mark
    )
    assert update == {
        "type": "queue_update",
        "steering": ["change course", "also steer"],
        "followUp": ["and then this"],
    }

    await rpc.release()
    await client.wait_for(is_type("agent_settled"), since=mark)
    requests = [r.body["messages"] for r in rpc.server.requests]
    users = [[text_of(m) for m in messages if m["role"] == "user"][1:] for messages in requests]
    # Steering arrives after the tool batch, one message per turn; the follow-up only when the
    # agent would otherwise stop.
    assert users == [
        [],
        ["change course"],
        ["change course", "also steer"],
        ["change course", "also steer", "and then this"],
    ]
    state = await client.get_state()
    assert state["isStreaming"] is False and state["pendingMessageCount"] == 0
    assert (
        state["messageCount"] == 9
    )  # 4 user, 4 assistant (the first calls the tool), 1 tool result


async def test_abort_stops_a_running_tool_and_settles_aborted(rpc: Rpc) -> None:
    rpc.server.add(rpc.gate_reply())
    client = await rpc.start()
    mark = client.mark()
    await client.prompt("block")
    await client.wait_for(is_type("tool_execution_start"), since=mark)
    await client.abort()  # answers once the run has settled
    assert (await client.get_state())["isStreaming"] is False
    settled = await client.wait_for(is_type("agent_settled"), since=mark)
    assert settled["aborted"] is True
    end = await client.wait_for(is_type("tool_execution_end"), since=mark)
    assert end["isError"] is True and "aborted" in text_of(end["result"]).lower()
    assert len(rpc.server.requests) == 1


async def test_get_state_fields_model_and_thinking_commands(rpc: Rpc) -> None:
    client = await rpc.start("--thinking", "low")
    state = await client.get_state()
    assert set(state) == {
        "model",
        "thinkingLevel",
        "isStreaming",
        "isCompacting",
        "steeringMode",
        "followUpMode",
        "sessionFile",
        "sessionId",
        "autoCompactionEnabled",
        "messageCount",
        "pendingMessageCount",
    }
    assert state["model"]["provider"] == PROVIDER and state["model"]["id"] == MODEL
    assert state["model"]["contextWindow"] == CONTEXT_WINDOW
    # --thinking low, but the scripted model does not reason: it starts at off, as in the
    # reference (tests/agent/test_settings_honoured.py checks the flag on a reasoning model).
    assert (state["thinkingLevel"], state["isStreaming"], state["isCompacting"]) == (
        "off",
        False,
        False,
    )
    assert (state["steeringMode"], state["followUpMode"]) == ("one-at-a-time", "one-at-a-time")
    assert state["sessionFile"].endswith(".jsonl") and state["sessionId"] in state["sessionFile"]
    # no sessionName while unset: the reference leaves it out
    assert (state["messageCount"], state["pendingMessageCount"]) == (0, 0)
    assert state["autoCompactionEnabled"] is True

    await client.set_steering_mode("all")
    await client.set_follow_up_mode("all")
    await client.set_auto_compaction(False)
    await client.set_auto_retry(False)
    await client.abort_retry()
    state = await client.get_state()
    assert (state["steeringMode"], state["followUpMode"], state["autoCompactionEnabled"]) == (
        "all",
        "all",
        False,
    )

    assert [m["id"] for m in await client.get_available_models()] == [MODEL, "scripted-large"]
    assert await client.cycle_thinking_level() is None  # the scripted model does not reason
    cycled = await client.cycle_model()
    assert (
        cycled is not None
        and cycled["model"]["id"] == "scripted-large"
        and cycled["isScoped"] is False
    )
    assert await client.cycle_thinking_level() == "minimal"  # the next level after off
    await client.set_thinking_level("high")
    chosen = await client.set_model(PROVIDER, MODEL)
    assert chosen["id"] == MODEL
    state = await client.get_state()
    # The switch clamps the level to the model: one that does not reason only has off.
    assert (state["model"]["id"], state["thinkingLevel"]) == (MODEL, "off")
    with pytest.raises(RpcError, match="Model not found: scripted/nope"):
        await client.set_model(PROVIDER, "nope")
    with pytest.raises(RpcError, match="field 'level'"):
        await client.set_thinking_level("ultra")


async def test_compact_without_the_compaction_plugin_is_a_clear_error(rpc: Rpc) -> None:
    client = await rpc.start()
    response = await client.send({"type": "compact", "customInstructions": "focus"})
    assert response["success"] is False
    assert "compaction is disabled" in response["error"]


COMPACTOR = """
from knightcode import hookimpl


@hookimpl
def session_check_compaction(trigger, custom_instructions, ctx):
    if trigger != "manual":
        return None
    return {"compacted": False, "retry": False,
            "result": {"summary": f"summary focused on {custom_instructions}", "tokensBefore": 42}}
"""


async def test_compact_is_answered_by_the_compaction_plugin(rpc: Rpc) -> None:
    client = await rpc.start("-e", str(rpc.plugin("compactor", COMPACTOR)))
    result = await client.compact("the tests")
    assert result == {"summary": "summary focused on the tests", "tokensBefore": 42}
    assert (await client.get_state())["isCompacting"] is False


PIXEL = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


async def test_prompt_with_an_image(rpc: Rpc) -> None:
    rpc.server.add(text_reply("a pixel"))
    client = await rpc.start(model=OTHER_MODEL)
    image = {"type": "image", "data": PIXEL, "mimeType": "image/png"}
    await client.prompt_and_wait("what is this?", images=[image])
    (user,) = [m for m in await client.get_messages() if m["role"] == "user"]
    assert user["content"] == [{"type": "text", "text": "what is this?"}, image]
    sent = rpc.server.requests[0].body["messages"][-1]["content"]
    assert {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}} in sent


async def test_a_large_rpc_image_is_shrunk_before_it_is_sent(rpc: Rpc) -> None:
    out = io.BytesIO()
    Image.new("RGB", (2500, 2500), (0, 200, 0)).save(out, format="PNG")
    data = base64.b64encode(out.getvalue()).decode("ascii")
    rpc.server.add(text_reply("green"))
    client = await rpc.start(model=OTHER_MODEL)
    await client.prompt_and_wait(
        "what is this?", images=[{"type": "image", "data": data, "mimeType": "image/png"}]
    )
    sent = rpc.server.requests[0].body["messages"][-1]["content"]
    (part,) = [p for p in sent if p["type"] == "image_url"]
    payload = part["image_url"]["url"].split(",", 1)[1]
    assert Image.open(io.BytesIO(base64.b64decode(payload))).size == (2000, 2000)
