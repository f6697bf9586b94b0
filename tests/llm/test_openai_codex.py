"""The ChatGPT backend client (``openai-codex-responses``) against the scripted server's Responses
wire (real HTTP on loopback): the path, the token, and the body's differences from the public
Responses API."""

from __future__ import annotations

import json
from typing import Any

from knightcode._llm.openai_codex import stream_openai_codex
from knightcode._llm.types import Context, StreamOptions
from knightcode._types.messages import AssistantMessage, LlmMessage
from knightcode.testing import ScriptedServer, reply, text_reply, tool_call, tool_call_reply

from .conftest import collect, make_model, user_context

OPTIONS = StreamOptions(api_key="oauth-access-token", reasoning="high", max_tokens=5000)


async def run(server: ScriptedServer, context: Context) -> AssistantMessage:
    model = make_model(server, api="openai-codex-responses", reasoning=True)
    events: list[dict[str, Any]] = await collect(stream_openai_codex(model, context, OPTIONS))
    assert events[-1]["type"] == "done", events[-1]
    message: AssistantMessage = events[-1]["message"]
    return message


def last_body(server: ScriptedServer) -> dict[str, Any]:
    body = server.requests[-1].body
    assert isinstance(body, dict)
    return body


async def test_the_request_goes_to_codex_responses_with_instructions(
    server: ScriptedServer,
) -> None:
    server.add(text_reply("Hello"))
    message = await run(server, user_context())
    block = message["content"][0]
    assert block["type"] == "text" and block["text"] == "Hello"
    request = server.requests[0]
    assert request.path == "/v1/codex/responses"
    assert request.headers["authorization"] == "Bearer oauth-access-token"
    body = last_body(server)
    assert body["instructions"] == "You are terse."
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert body["store"] is False and body["stream"] is True
    assert "max_output_tokens" not in body  # the backend decides, even when asked for 5000
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["text"] == {"verbosity": "medium"}


async def test_the_next_turn_sends_reasoning_and_calls_back_without_item_ids(
    server: ScriptedServer,
) -> None:
    server.add(
        reply(
            thinking="Plan.", text="", tool_calls=[tool_call("call_1", "read", {"path": "a.txt"})]
        ),
        text_reply("Done"),
    )
    first = await run(server, user_context())
    call = next(block for block in first["content"] if block["type"] == "toolCall")
    history: list[LlmMessage] = [
        {"role": "user", "content": "hi", "timestamp": 0},
        first,
        {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": "read",
            "content": [{"type": "text", "text": "contents"}],
            "isError": False,
            "timestamp": 0,
        },
    ]
    await run(server, Context("sys", history))
    items = last_body(server)["input"]
    assert all("id" not in item for item in items), items
    reasoning = next(item for item in items if item.get("type") == "reasoning")
    assert reasoning["encrypted_content"] == "enc-scripted-1"
    function_call = next(item for item in items if item.get("type") == "function_call")
    assert json.loads(function_call["arguments"]) == {"path": "a.txt"}
    output = next(item for item in items if item.get("type") == "function_call_output")
    assert output["call_id"] == function_call["call_id"]


async def test_a_tool_call_ends_the_turn_with_tool_use(server: ScriptedServer) -> None:
    server.add(tool_call_reply([tool_call("call_2", "ls", {})]))
    message = await run(server, user_context())
    assert message["stopReason"] == "toolUse"
