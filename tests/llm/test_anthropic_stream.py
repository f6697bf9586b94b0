"""The Anthropic messages client against the scripted server (real HTTP on loopback)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from knightcode import AbortSignal
from knightcode._llm.anthropic_messages import stream_anthropic_messages
from knightcode._llm.errors import classify_error
from knightcode._llm.types import Context, StreamOptions, Tool
from knightcode.testing import (
    ScriptedServer,
    drop_reply,
    error_reply,
    reply,
    stream_error_reply,
    text_reply,
    tool_call,
    tool_call_reply,
    usage,
)

from .conftest import collect, kinds, make_model, user_context


async def run(
    server: ScriptedServer,
    options: StreamOptions | None = None,
    context: Context | None = None,
    **model_changes: Any,
) -> list[dict[str, Any]]:
    model = make_model(server, api="anthropic-messages", **model_changes)
    return await collect(
        stream_anthropic_messages(
            model, context or user_context(), options or StreamOptions(api_key="sk-ant-test")
        )
    )


async def test_text_stream(server: ScriptedServer) -> None:
    server.add(text_reply("Hel", "lo"))
    events = await run(server)
    assert kinds(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert events[4]["content"] == "Hello"
    message = events[-1]["message"]
    assert message["content"] == [{"type": "text", "text": "Hello"}]
    assert message["stopReason"] == "stop"
    assert message["api"] == "anthropic-messages"
    assert message["responseId"].startswith("msg_scripted")


async def test_request_headers_and_body(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    context = user_context("hello")
    context.tools = [
        Tool(
            "read",
            "Read a file",
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        )
    ]
    await run(server, StreamOptions(api_key="sk-ant-test", max_tokens=1000), context)
    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    body = request.body
    assert body["max_tokens"] == 1000
    assert body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert body["tools"] == [
        {
            "name": "read",
            "description": "Read a file",
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        }
    ]


async def test_cache_retention_none_writes_no_cache(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    await run(server, StreamOptions(cache_retention="none"))
    body = server.requests[0].body
    assert "cache_control" not in str(body)


async def test_default_max_tokens_from_the_model(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    await run(server, StreamOptions())
    assert server.requests[0].body["max_tokens"] == 4096


async def test_thinking_with_signature(server: ScriptedServer) -> None:
    server.add(reply(thinking=["Con", "sider."], text=["Done."]))
    events = await run(server)
    assert kinds(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "done",
    ]
    content = events[-1]["message"]["content"]
    assert content[0]["type"] == "thinking"
    assert content[0]["thinking"] == "Consider."
    assert content[0]["thinkingSignature"].startswith("scripted-signature")
    assert content[1] == {"type": "text", "text": "Done."}


async def test_thinking_request_parameters(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    await run(
        server, StreamOptions(reasoning="medium", max_tokens=2000), reasoning=True, max_tokens=64000
    )
    request = server.requests[0]
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert request.body["max_tokens"] == 2000 + 8192
    assert "interleaved-thinking" in request.headers["anthropic-beta"]


async def test_tool_use(server: ScriptedServer) -> None:
    server.add(
        tool_call_reply(
            [
                tool_call("toolu_1", "read", {"path": "a.py"}, split=3),
                tool_call("toolu_2", "ls", {}, split=1),
            ],
            text="Looking.",
        )
    )
    events = await run(server)
    starts = [
        (e["contentIndex"], e["id"], e["toolName"]) for e in events if e["type"] == "toolcall_start"
    ]
    assert starts == [(1, "toolu_1", "read"), (2, "toolu_2", "ls")]
    pieces = [
        e["delta"] for e in events if e["type"] == "toolcall_delta" and e["contentIndex"] == 1
    ]
    assert len(pieces) == 3 and "".join(pieces) == '{"path": "a.py"}'
    ends = [e["toolCall"] for e in events if e["type"] == "toolcall_end"]
    assert ends == [
        {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a.py"}},
        {"type": "toolCall", "id": "toolu_2", "name": "ls", "arguments": {}},
    ]
    assert events[-1]["reason"] == "toolUse"


async def test_usage_with_cache_read_and_write(server: ScriptedServer) -> None:
    server.add(
        text_reply("ok", usage=usage(input=100, output=50, cache_read=2000, cache_write=500))
    )
    events = await run(server)
    u = events[-1]["message"]["usage"]
    assert (u["input"], u["output"], u["cacheRead"], u["cacheWrite"], u["totalTokens"]) == (
        100,
        50,
        2000,
        500,
        2650,
    )
    expected = (100 * 3.0 + 50 * 15.0 + 2000 * 0.3 + 500 * 3.75) / 1e6
    assert u["cost"]["total"] == pytest.approx(expected)


async def test_usage_is_current_after_message_start(server: ScriptedServer) -> None:
    server.add(text_reply("a", "b", usage=usage(input=100, output=7)))
    inputs = []
    async for event in stream_anthropic_messages(
        make_model(server, api="anthropic-messages"), user_context(), StreamOptions()
    ):
        if event["type"] == "text_delta":
            inputs.append(event["partial"]["usage"]["input"])
    assert inputs == [100, 100]


async def test_conversation_conversion(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    assistant = {
        "role": "assistant",
        "api": "anthropic-messages",
        "provider": "scripted",
        "model": "scripted-model",
        "content": [
            {"type": "thinking", "thinking": "plan", "thinkingSignature": "sig=="},
            {"type": "toolCall", "id": "call|1", "name": "read", "arguments": {"path": "a"}},
            {"type": "toolCall", "id": "call|2", "name": "read", "arguments": {"path": "b"}},
        ],
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": "toolUse",
        "timestamp": 0,
    }
    results = [
        {
            "role": "toolResult",
            "toolCallId": f"call|{n}",
            "toolName": "read",
            "content": [{"type": "text", "text": f"R{n}"}],
            "isError": n == 2,
            "timestamp": 0,
        }
        for n in (1, 2)
    ]
    context = Context(
        messages=[{"role": "user", "content": "go", "timestamp": 0}, assistant, *results]
    )
    await run(server, context=context)
    messages = server.requests[0].body["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "plan", "signature": "sig=="},
            {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a"}},
            {"type": "tool_use", "id": "call_2", "name": "read", "input": {"path": "b"}},
        ],
    }
    # Consecutive tool results share one user message; ids follow the normalised tool calls.
    assert messages[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "is_error": False, "content": "R1"},
            {
                "type": "tool_result",
                "tool_use_id": "call_2",
                "is_error": True,
                "content": "R2",
                "cache_control": {"type": "ephemeral"},
            },
        ],
    }


async def test_thinking_of_another_model_is_sent_as_text(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    assistant = {
        "role": "assistant",
        "api": "openai-completions",
        "provider": "other",
        "model": "m",
        "content": [
            {"type": "thinking", "thinking": "plan", "thinkingSignature": "reasoning_content"},
            {"type": "text", "text": "answer"},
        ],
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": "stop",
        "timestamp": 0,
    }
    context = Context(
        messages=[
            {"role": "user", "content": "q", "timestamp": 0},
            assistant,
            {"role": "user", "content": "more", "timestamp": 0},
        ]
    )
    await run(server, context=context)
    assert server.requests[0].body["messages"][1]["content"] == [
        {"type": "text", "text": "plan"},
        {"type": "text", "text": "answer"},
    ]


async def test_overloaded_http_error(server: ScriptedServer) -> None:
    server.add(error_reply(529, "Overloaded"))
    error = (await run(server))[-1]
    assert error["error"]["errorMessage"] == "529 Overloaded: Overloaded"
    assert classify_error(error["error"]) == "retryable"


async def test_prompt_too_long(server: ScriptedServer) -> None:
    server.add(error_reply(400, "prompt is too long: 213462 tokens > 200000 maximum"))
    error = (await run(server))[-1]
    assert classify_error(error["error"]) == "overflow"


async def test_overloaded_error_event_inside_the_stream(server: ScriptedServer) -> None:
    server.add(stream_error_reply("Overloaded", text=["par"], error_type="overloaded_error"))
    events = await run(server)
    assert events[-1]["type"] == "error"
    assert events[-1]["error"]["errorMessage"] == "overloaded_error: Overloaded"
    assert classify_error(events[-1]["error"]) == "retryable"


async def test_dropped_stream(server: ScriptedServer) -> None:
    server.add(drop_reply(after_chunks=4))
    events = await run(server)
    assert events[-1]["type"] == "error"
    assert events[-1]["error"]["errorMessage"].startswith("terminated")
    assert classify_error(events[-1]["error"]) == "retryable"


async def test_abort(server: ScriptedServer) -> None:
    server.add(text_reply(*["x"] * 50, delay=0.1))
    signal = AbortSignal()
    events = []
    started = 0.0
    async for event in stream_anthropic_messages(
        make_model(server, api="anthropic-messages"), user_context(), StreamOptions(signal=signal)
    ):
        events.append(event)
        if event["type"] == "text_delta" and not signal.is_set():
            signal.abort()
            started = time.monotonic()
    assert time.monotonic() - started < 0.5
    assert events[-1]["reason"] == "aborted"
