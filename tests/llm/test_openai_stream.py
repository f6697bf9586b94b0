"""The OpenAI chat-completions client against the scripted server (real HTTP on loopback)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import httpx
import pytest

from knightcode import AbortSignal
from knightcode._llm.errors import classify_error, is_context_overflow, is_retryable
from knightcode._llm.openai_completions import stream_openai_completions
from knightcode._llm.types import Context, StreamOptions, Tool
from knightcode.testing import (
    ScriptedServer,
    drop_reply,
    error_reply,
    raw_reply,
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
    model = make_model(server, **model_changes)
    return await collect(
        stream_openai_completions(
            model, context or user_context(), options or StreamOptions(api_key="sk-test")
        )
    )


async def test_text_stream_events_and_final_message(server: ScriptedServer) -> None:
    server.add(text_reply("Hel", "lo", " world"))
    events = await run(server)
    assert kinds(events) == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert [e["delta"] for e in events if e["type"] == "text_delta"] == ["Hel", "lo", " world"]
    assert events[5]["content"] == "Hello world"
    done = events[-1]
    assert done["reason"] == "stop"
    message = done["message"]
    assert message["content"] == [{"type": "text", "text": "Hello world"}]
    assert message["stopReason"] == "stop"
    assert (message["api"], message["provider"], message["model"]) == (
        "openai-completions",
        "scripted",
        "scripted-model",
    )
    assert message["responseId"].startswith("chatcmpl-scripted")
    # Every event carries the very same message dict, not a copy.
    assert all(e.get("partial", message) is message for e in events)


async def test_partial_message_is_current_at_each_delta(server: ScriptedServer) -> None:
    server.add(text_reply("a", "b", "c"))
    seen = []
    async for event in stream_openai_completions(
        make_model(server), user_context(), StreamOptions()
    ):
        if event["type"] == "text_delta":
            seen.append(event["partial"]["content"][0]["text"])
    assert seen == ["a", "ab", "abc"]


async def test_request_body(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    tool = Tool(
        "read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
    )
    context = user_context("hello")
    context.tools = [tool]
    await run(server, StreamOptions(api_key="sk-test", max_tokens=100, temperature=0.2), context)
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.body
    assert body["model"] == "scripted-model"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 100  # not api.openai.com: the field every compatible server knows
    assert body["temperature"] == 0.2
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hello"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": tool.parameters,
            },
        }
    ]
    assert "store" not in body


async def test_openai_base_url_uses_max_completion_tokens(server: ScriptedServer) -> None:
    from knightcode._llm.openai_convert import build_openai_body

    model = make_model(server, base_url="https://api.openai.com/v1", reasoning=True)
    body = build_openai_body(model, user_context(), StreamOptions(max_tokens=50, reasoning="high"))
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body
    assert body["messages"][0]["role"] == "developer"
    assert body["reasoning_effort"] == "high"
    assert body["store"] is False


async def test_no_key_sends_no_authorization(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    await run(server, StreamOptions())
    assert "authorization" not in server.requests[0].headers


async def test_conversation_conversion(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    context = Context(
        system_prompt=None,
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image", "data": "QUJD", "mimeType": "image/png"},
                ],
                "timestamp": 0,
            },
            {
                "role": "assistant",
                "api": "openai-completions",
                "provider": "scripted",
                "model": "scripted-model",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "hmm",
                        "thinkingSignature": "reasoning_content",
                    },
                    {"type": "text", "text": "Reading."},
                    {
                        "type": "toolCall",
                        "id": "call_1",
                        "name": "read",
                        "arguments": {"path": "a"},
                    },
                ],
                "usage": {
                    "input": 0,
                    "output": 0,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 0,
                },
                "stopReason": "toolUse",
                "timestamp": 0,
            },
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "read",
                "content": [{"type": "text", "text": "A"}],
                "isError": False,
                "timestamp": 0,
            },
        ],
    )
    await run(server, context=context, input=("text", "image"))
    messages = server.requests[0].body["messages"]
    assert messages[0] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
        ],
    }
    assert messages[1] == {
        "role": "assistant",
        "content": "Reading.",
        "reasoning_content": "hmm",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path":"a"}'},
            }
        ],
    }
    assert messages[2] == {"role": "tool", "content": "A", "tool_call_id": "call_1"}


async def test_thinking_from_reasoning_content(server: ScriptedServer) -> None:
    server.add(reply(thinking=["Let me ", "think."], text=["Answer"]))
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
    assert events[4]["content"] == "Let me think."
    assert events[4]["contentIndex"] == 0 and events[5]["contentIndex"] == 1
    assert events[-1]["message"]["content"] == [
        {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "reasoning_content"},
        {"type": "text", "text": "Answer"},
    ]


async def test_thinking_from_reasoning_field(server: ScriptedServer) -> None:
    body = (
        'data: {"id":"r1","choices":[{"index":0,"delta":{"reasoning":"deep"}}]}\n\n'
        'data: {"id":"r1","choices":[{"index":0,"delta":{"content":"ok"},'
        '"finish_reason":"stop"}]}\n\n'
        "data: [DONE]\n\n"
    )
    server.add(raw_reply(body))
    events = await run(server)
    assert events[-1]["message"]["content"][0] == {
        "type": "thinking",
        "thinking": "deep",
        "thinkingSignature": "reasoning",
    }


@pytest.mark.parametrize("interleave", [False, True])
async def test_two_parallel_tool_calls_split_across_chunks(
    server: ScriptedServer, interleave: bool
) -> None:
    server.add(
        tool_call_reply(
            [
                tool_call("call_a", "read", {"path": "src/main.py", "offset": 10}, split=4),
                tool_call("call_b", "bash", {"command": "ls -la"}, split=3),
            ],
            text="Let me look.",
            interleave=interleave,
        )
    )
    events = await run(server)
    starts = [e for e in events if e["type"] == "toolcall_start"]
    assert [(e["contentIndex"], e["id"], e["toolName"]) for e in starts] == [
        (1, "call_a", "read"),
        (2, "call_b", "bash"),
    ]
    deltas: dict[int, str] = {}
    for event in events:
        if event["type"] == "toolcall_delta":
            deltas[event["contentIndex"]] = deltas.get(event["contentIndex"], "") + event["delta"]
    assert deltas == {1: '{"path": "src/main.py", "offset": 10}', 2: '{"command": "ls -la"}'}
    ends = [e for e in events if e["type"] == "toolcall_end"]
    assert [e["toolCall"] for e in ends] == [
        {
            "type": "toolCall",
            "id": "call_a",
            "name": "read",
            "arguments": {"path": "src/main.py", "offset": 10},
        },
        {"type": "toolCall", "id": "call_b", "name": "bash", "arguments": {"command": "ls -la"}},
    ]
    # The text block was closed before the first tool call started.
    assert kinds(events).index("text_end") < kinds(events).index("toolcall_start")
    done = events[-1]
    assert done["reason"] == "toolUse"
    assert [block["type"] for block in done["message"]["content"]] == [
        "text",
        "toolCall",
        "toolCall",
    ]


async def test_invalid_tool_arguments_become_empty_object(server: ScriptedServer) -> None:
    server.add(tool_call_reply([tool_call("c1", "read", "{not json", split=2)]))
    events = await run(server)
    assert events[-1]["message"]["content"][0]["arguments"] == {}


async def test_truncated_tool_arguments_are_repaired(server: ScriptedServer) -> None:
    server.add(
        reply(
            tool_calls=[tool_call("c1", "write", '{"path": "a.txt", "content": "hel', split=2)],
            finish="length",
        )
    )
    events = await run(server)
    assert events[-1]["reason"] == "length"
    assert events[-1]["message"]["content"][0]["arguments"] == {"path": "a.txt", "content": "hel"}


async def test_usage_with_cached_tokens_and_cost(server: ScriptedServer) -> None:
    server.add(text_reply("ok", usage=usage(input=1000, output=200, cache_read=3000)))
    events = await run(server)
    message = events[-1]["message"]
    usage_ = message["usage"]
    assert (usage_["input"], usage_["output"], usage_["cacheRead"], usage_["cacheWrite"]) == (
        1000,
        200,
        3000,
        0,
    )
    assert usage_["totalTokens"] == 4200
    cost = usage_["cost"]
    assert cost["input"] == pytest.approx(1000 * 3.0 / 1e6)
    assert cost["output"] == pytest.approx(200 * 15.0 / 1e6)
    assert cost["cacheRead"] == pytest.approx(3000 * 0.3 / 1e6)
    assert cost["total"] == pytest.approx(cost["input"] + cost["output"] + cost["cacheRead"])


async def test_http_429_with_retry_after(server: ScriptedServer) -> None:
    server.add(error_reply(429, "Rate limit reached for requests", {"retry-after": "7"}))
    events = await run(server)
    assert kinds(events) == ["error"]
    error = events[0]
    assert error["reason"] == "error"
    assert error["error"]["stopReason"] == "error"
    assert (
        error["error"]["errorMessage"] == "429 Too Many Requests: Rate limit reached for requests"
    )
    assert error["retryAfterMs"] == 7000
    assert is_retryable(error["error"])


async def test_http_529_overloaded_is_retryable(server: ScriptedServer) -> None:
    server.add(error_reply(529, "Overloaded"))
    error = (await run(server))[-1]
    assert error["error"]["errorMessage"] == "529 Overloaded: Overloaded"
    assert "retryAfterMs" not in error
    assert classify_error(error["error"]) == "retryable"


async def test_http_401_is_fatal(server: ScriptedServer) -> None:
    server.add(error_reply(401, "Incorrect API key provided"))
    error = (await run(server, StreamOptions(api_key="sk-secret-123456")))[-1]
    assert error["error"]["errorMessage"] == "401 Unauthorized: Incorrect API key provided"
    assert classify_error(error["error"]) == "fatal"


async def test_error_text_never_contains_the_key(server: ScriptedServer) -> None:
    server.add(error_reply(401, "Incorrect API key provided: sk-secret-123456"))
    error = (await run(server, StreamOptions(api_key="sk-secret-123456")))[-1]
    assert "sk-secret-123456" not in error["error"]["errorMessage"]


async def test_http_400_overflow(server: ScriptedServer) -> None:
    server.add(
        error_reply(
            400,
            "This model's maximum context length is 8192 tokens. "
            "However, you requested 9000 tokens",
        )
    )
    error = (await run(server))[-1]
    assert error["error"]["errorMessage"].startswith(
        "400 Bad Request: This model's maximum context length"
    )
    assert is_context_overflow(error["error"], 8192)
    assert not is_retryable(error["error"])
    assert classify_error(error["error"]) == "overflow"


async def test_http_400_without_body_is_overflow(server: ScriptedServer) -> None:
    server.add(error_reply(400))
    error = (await run(server))[-1]
    assert error["error"]["errorMessage"] == "400 status code (no body)"
    assert is_context_overflow(error["error"])


async def test_dropped_connection_is_a_retryable_error(server: ScriptedServer) -> None:
    server.add(drop_reply(after_chunks=2))
    events = await run(server)
    assert kinds(events) == ["start", "text_start", "text_delta", "text_delta", "error"]
    error = events[-1]["error"]
    assert error["errorMessage"].startswith("terminated")
    assert error["content"] == [{"type": "text", "text": "part0 part1 "}]  # what arrived is kept
    assert is_retryable(error)


async def test_stream_closed_without_done_is_an_error() -> None:
    # Connection-delimited framing: the cut looks like a clean end; the missing [DONE] and
    # finish_reason tell the client otherwise.
    with ScriptedServer(framing="close") as server:
        server.add(drop_reply(after_chunks=1))
        events = await run(server)
    assert events[-1]["type"] == "error"
    assert events[-1]["error"]["errorMessage"].startswith("terminated")


async def test_close_delimited_stream_succeeds() -> None:
    with ScriptedServer(framing="close") as server:
        server.add(text_reply("a", "b"), text_reply("c"))
        first = await run(server)
        second = await run(server)
    assert first[-1]["message"]["content"][0]["text"] == "ab"
    assert second[-1]["type"] == "done"


async def test_error_inside_the_stream(server: ScriptedServer) -> None:
    server.add(stream_error_reply("upstream connect error", text=["par"]))
    events = await run(server)
    assert events[-1]["type"] == "error"
    assert events[-1]["error"]["errorMessage"] == "upstream connect error"
    assert is_retryable(events[-1]["error"])


async def test_connection_refused(server: ScriptedServer) -> None:
    port = server.port
    server.stop()
    model = make_model(server, base_url=f"http://127.0.0.1:{port}/v1")
    events = await collect(stream_openai_completions(model, user_context(), StreamOptions()))
    assert kinds(events) == ["error"]
    assert events[0]["error"]["errorMessage"].startswith("Connection error")
    assert is_retryable(events[0]["error"])


async def test_idle_timeout(server: ScriptedServer) -> None:
    server.add(text_reply("a", "b", delay=1.0))
    started = time.monotonic()
    events = await run(server, StreamOptions(idle_timeout_ms=200))
    assert time.monotonic() - started < 0.9
    assert events[-1]["type"] == "error"
    assert "timed out" in events[-1]["error"]["errorMessage"]
    assert is_retryable(events[-1]["error"])


async def test_abort_mid_stream_returns_promptly(server: ScriptedServer) -> None:
    server.add(text_reply(*[f"t{i} " for i in range(50)], delay=0.1))
    signal = AbortSignal()
    events = []
    aborted_at = 0.0
    async for event in stream_openai_completions(
        make_model(server), user_context(), StreamOptions(signal=signal)
    ):
        events.append(event)
        if event["type"] == "text_delta" and not signal.is_set():
            # Abort while the client waits for the next (slow) chunk.
            asyncio.get_running_loop().call_later(0.02, signal.abort)
            aborted_at = time.monotonic() + 0.02
    elapsed = time.monotonic() - aborted_at
    assert elapsed < 0.5
    final = events[-1]
    assert final["type"] == "error" and final["reason"] == "aborted"
    assert final["error"]["stopReason"] == "aborted"
    assert final["error"]["content"][0]["text"].startswith("t0")


async def test_abort_before_the_request(server: ScriptedServer) -> None:
    signal = AbortSignal()
    signal.abort()
    events = await run(server, StreamOptions(signal=signal))
    assert kinds(events) == ["error"] and events[0]["reason"] == "aborted"
    assert server.requests == []


async def test_on_payload_replaces_the_body(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    seen: list[dict[str, Any]] = []

    async def on_payload(body: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(body)
        return {**body, "temperature": 0.9, "custom": True}

    await run(server, StreamOptions(on_payload=on_payload))
    assert seen[0]["model"] == "scripted-model"
    assert server.requests[0].body["temperature"] == 0.9
    assert server.requests[0].body["custom"] is True


async def test_on_payload_returning_none_keeps_the_body(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))

    async def on_payload(body: dict[str, Any]) -> None:
        return None

    await run(server, StreamOptions(on_payload=on_payload))
    assert "temperature" not in server.requests[0].body


async def test_on_response_sees_status_and_headers(server: ScriptedServer) -> None:
    server.add(error_reply(429, "slow", {"x-ratelimit-remaining": "0"}))
    seen: list[tuple[int, dict[str, str]]] = []

    async def on_response(status: int, headers: dict[str, str]) -> None:
        seen.append((status, headers))

    await run(server, StreamOptions(on_response=on_response))
    assert seen[0][0] == 429 and seen[0][1]["x-ratelimit-remaining"] == "0"


async def test_crlf_framing_and_unicode_separators(server: ScriptedServer) -> None:
    body = (
        'data: {"id":"x","choices":[{"index":0,"delta":{"content":"a\u2028b"}}]}\r\n\r\n'
        ": keep-alive comment\r\n\r\n"
        'data: {"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\r\n\r\n'
        "data: [DONE]\r\n\r\n"
    )
    server.add(raw_reply(body))
    events = await run(server)
    assert events[-1]["message"]["content"] == [{"type": "text", "text": "a\u2028b"}]


async def test_shared_client_reuses_the_connection(server: ScriptedServer) -> None:
    server.add(text_reply("a"), text_reply("b"))
    model = make_model(server)
    async with httpx.AsyncClient() as client:
        for _ in range(2):
            events = await collect(
                stream_openai_completions(model, user_context(), StreamOptions(), client=client)
            )
            assert events[-1]["type"] == "done"
    assert len(server.requests) == 2


async def test_closing_the_stream_early_releases_the_connection(server: ScriptedServer) -> None:
    server.add(text_reply(*["x"] * 20, delay=0.05), text_reply("next"))
    model = make_model(server)
    async with httpx.AsyncClient() as client:
        async with contextlib.aclosing(
            stream_openai_completions(model, user_context(), StreamOptions(), client=client)
        ) as events:
            async for event in events:
                if event["type"] == "text_delta":
                    break
        following = await collect(stream_openai_completions(model, user_context(), client=client))
    assert following[-1]["message"]["content"][0]["text"] == "next"


async def test_last_event_without_a_blank_line(server: ScriptedServer) -> None:
    body = (
        'data: {"id":"x","choices":[{"index":0,"delta":{"content":"ok"}}]}\n\n'
        'data: {"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'
    )
    server.add(raw_reply(body))
    events = await run(server)
    assert events[-1]["type"] == "done"
    assert events[-1]["message"]["content"] == [{"type": "text", "text": "ok"}]
