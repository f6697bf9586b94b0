"""The Google Gemini client against the scripted server's Gemini wire format (real HTTP)."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

from knightcode import AbortSignal
from knightcode._llm.errors import is_context_overflow
from knightcode._llm.google_generative import stream_google_generative
from knightcode._llm.registry import ModelRegistry
from knightcode._llm.types import Context, StreamOptions, Tool
from knightcode._types.messages import AssistantMessage
from knightcode.testing import (
    ScriptedServer,
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

API = "google-generative-ai"


async def run(
    server: ScriptedServer,
    options: StreamOptions | None = None,
    context: Context | None = None,
    **model_changes: Any,
) -> list[dict[str, Any]]:
    model = make_model(server, api=API, **model_changes)
    return await collect(
        stream_google_generative(
            model, context or user_context(), options or StreamOptions(api_key="gem-key-1234")
        )
    )


async def test_text_stream_and_usage(server: ScriptedServer) -> None:
    server.add(text_reply("Hel", "lo", usage=usage(input=10, output=5, cache_read=4)))
    events = await run(server)
    assert kinds(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    message = events[-1]["message"]
    assert message["content"] == [{"type": "text", "text": "Hello"}]
    assert message["stopReason"] == "stop"
    assert message["api"] == API
    assert message["responseId"] == "gemini-scripted-1"
    # promptTokenCount 14 includes the 4 cached tokens: counted apart
    assert message["usage"]["input"] == 10
    assert message["usage"]["cacheRead"] == 4
    assert message["usage"]["output"] == 5
    assert message["usage"]["cost"]["input"] == 10 * 3.0 / 1e6


async def test_request_url_headers_and_body(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    context = user_context("hello")
    context.tools = [
        Tool(
            "read",
            "Read a file",
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "properties": {
                    "path": {"type": "string"},
                    "opts": {"type": "object", "additionalProperties": False},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        )
    ]
    await run(server, StreamOptions(api_key="gem-key-1234", temperature=0.5), context)
    request = server.requests[0]
    assert request.path == "/v1/models/scripted-model:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == "gem-key-1234"
    assert "authorization" not in request.headers
    body = request.body
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hello"}]}]
    assert body["systemInstruction"] == {"parts": [{"text": "You are terse."}]}
    assert body["generationConfig"] == {"maxOutputTokens": 4096, "temperature": 0.5}
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "read"
    # full JSON Schema (parametersJsonSchema) keeps additionalProperties; $schema is dropped
    assert declaration["parametersJsonSchema"] == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "opts": {"type": "object", "additionalProperties": False},
        },
        "required": ["path"],
        "additionalProperties": False,
    }


async def test_thinking_budget_from_settings(server: ScriptedServer) -> None:
    flash = "gemini-2.5-flash"
    runs: list[tuple[str, StreamOptions]] = [
        (flash, StreamOptions(api_key="k", reasoning="high")),
        ("gemini-2.5-pro", StreamOptions(api_key="k", reasoning="high")),
        (flash, StreamOptions(api_key="k", reasoning="low", thinking_budgets={"low": 1234})),
        ("gemini-exp", StreamOptions(api_key="k", reasoning="medium")),
        (flash, StreamOptions(api_key="k", reasoning="off")),
    ]
    for model_id, options in runs:
        server.add(text_reply("ok"))
        await run(server, options, id=model_id, reasoning=True)
    server.add(text_reply("ok"))
    await run(server, StreamOptions(api_key="k", reasoning="high"), id=flash)  # not reasoning
    configs = [r.body["generationConfig"].get("thinkingConfig") for r in server.requests]
    assert configs == [
        {"includeThoughts": True, "thinkingBudget": 24576},
        {"includeThoughts": True, "thinkingBudget": 32768},
        {"includeThoughts": True, "thinkingBudget": 1234},
        {"includeThoughts": True, "thinkingBudget": -1},  # an unknown model: dynamic
        {"thinkingBudget": 0},
        None,
    ]


async def test_gemini3_thinking_level(server: ScriptedServer) -> None:
    runs = [
        ("gemini-3-pro-preview", "medium", {}),
        ("gemini-3-flash-preview", "medium", {}),
        ("gemini-3.1-pro-preview", "off", {}),
        ("gemini-3-flash-preview", "off", {}),
        ("gemini-3-flash-preview", "xhigh", {}),
        ("gemini-3-flash-preview", "low", {"low": "MINIMAL"}),
    ]
    for model_id, level, level_map in runs:
        server.add(text_reply("ok"))
        options = StreamOptions(api_key="k", reasoning=level)  # type: ignore[arg-type]
        await run(server, options, id=model_id, reasoning=True, thinking_level_map=level_map)
    levels = [r.body["generationConfig"]["thinkingConfig"] for r in server.requests]
    assert levels == [
        {"includeThoughts": True, "thinkingLevel": "HIGH"},
        {"includeThoughts": True, "thinkingLevel": "MEDIUM"},
        {"thinkingLevel": "LOW"},  # Gemini 3 cannot stop thinking: its lowest level
        {"thinkingLevel": "MINIMAL"},
        {"includeThoughts": True, "thinkingLevel": "HIGH"},
        {"includeThoughts": True, "thinkingLevel": "MINIMAL"},  # models.json thinkingLevelMap
    ]


async def test_thinking_then_text(server: ScriptedServer) -> None:
    server.add(reply(thinking=["Let me ", "think"], text="Answer"))
    events = await run(server, StreamOptions(api_key="k", reasoning="high"), reasoning=True)
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
    thinking = events[-1]["message"]["content"][0]
    assert thinking["thinking"] == "Let me think"
    assert base64.b64decode(thinking["thinkingSignature"]) == b"scripted-signature-1"


async def test_tool_calls_get_ids_and_signature(server: ScriptedServer) -> None:
    server.add(
        tool_call_reply(
            [tool_call("", "read", {"path": "a.txt"}), tool_call("", "read", {"path": "b"})],
            thinking="plan",
        )
    )
    events = await run(server, StreamOptions(api_key="k", reasoning="high"), reasoning=True)
    assert kinds(events)[-7:] == [
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    message = events[-1]["message"]
    assert message["stopReason"] == "toolUse"
    first, second = message["content"][1], message["content"][2]
    assert first["arguments"] == {"path": "a.txt"}
    assert first["id"].startswith("read_") and second["id"].startswith("read_")
    assert first["id"] != second["id"]
    assert "thoughtSignature" in first and "thoughtSignature" not in second


async def test_round_trip_sends_signatures_and_function_responses(
    server: ScriptedServer,
) -> None:
    server.add(text_reply("done"))
    model = make_model(server, api=API, id="gemini-3-pro-preview", reasoning=True)
    signature = base64.b64encode(b"sig").decode()
    assistant: AssistantMessage = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "plan", "thinkingSignature": signature},
            {
                "type": "toolCall",
                "id": "c1",
                "name": "read",
                "arguments": {"path": "a"},
                "thoughtSignature": signature,
            },
            {"type": "toolCall", "id": "c2", "name": "read", "arguments": {"path": "b"}},
        ],
        "api": API,
        "provider": "scripted",
        "model": "gemini-3-pro-preview",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": "toolUse",
        "timestamp": 0,
    }
    context = user_context("read them")
    context.messages += [
        assistant,
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "A"}],
            "isError": False,
            "timestamp": 0,
        },
        {
            "role": "toolResult",
            "toolCallId": "c2",
            "toolName": "read",
            "content": [{"type": "text", "text": "no such file"}],
            "isError": True,
            "timestamp": 0,
        },
    ]
    await collect(stream_google_generative(model, context, StreamOptions(api_key="k")))
    contents = server.requests[0].body["contents"]
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"thought": True, "text": "plan", "thoughtSignature": signature},
            {
                "functionCall": {"name": "read", "args": {"path": "a"}, "id": "c1"},
                "thoughtSignature": signature,
            },
            {
                # Gemini 3 rejects a call without a signature: Google's documented stand-in
                "functionCall": {"name": "read", "args": {"path": "b"}, "id": "c2"},
                "thoughtSignature": "skip_thought_signature_validator",
            },
        ],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "read", "response": {"output": "A"}, "id": "c1"}},
            {
                "functionResponse": {
                    "name": "read",
                    "response": {"error": "no such file"},
                    "id": "c2",
                }
            },
        ],
    }


async def test_inline_images(server: ScriptedServer) -> None:
    server.add(text_reply("a cat"))
    context = Context(
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is it"},
                    {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                ],
                "timestamp": 0,
            }
        ]
    )
    await run(server, context=context, input=("text", "image"))
    assert server.requests[0].body["contents"][0]["parts"] == [
        {"text": "what is it"},
        {"inlineData": {"mimeType": "image/png", "data": "aGVsbG8="}},
    ]


async def test_http_error_body(server: ScriptedServer) -> None:
    server.add(error_reply(429, "Resource has been exhausted (e.g. check quota)."))
    events = await run(server)
    assert events[-1]["type"] == "error"
    message = events[-1]["error"]["errorMessage"]
    assert message == "429 Too Many Requests: Resource has been exhausted (e.g. check quota)."


async def test_stream_error_event(server: ScriptedServer) -> None:
    server.add(stream_error_reply("The model is overloaded.", text=["par"]))
    events = await run(server)
    assert events[-1]["type"] == "error"
    assert events[-1]["error"]["errorMessage"] == "The model is overloaded."
    assert events[-1]["error"]["content"] == [{"type": "text", "text": "par"}]


async def test_max_tokens_and_blocked_finish(server: ScriptedServer) -> None:
    server.add(text_reply("cut", finish="length"))
    events = await run(server)
    assert events[-1]["reason"] == "length"
    blocked = (
        b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},'
        b'"finishReason":"SAFETY"}]}\r\n\r\n'
    )
    server.add(raw_reply(blocked))
    events = await run(server)
    assert events[-1]["type"] == "error"
    assert events[-1]["error"]["errorMessage"] == "The provider stopped the response: SAFETY"


async def test_stream_without_finish_is_an_error(server: ScriptedServer) -> None:
    server.add(raw_reply(b'data: {"candidates":[{"content":{"parts":[{"text":"x"}]}}]}\r\n\r\n'))
    events = await run(server)
    assert events[-1]["type"] == "error"
    assert "terminated" in events[-1]["error"]["errorMessage"]


def test_builtin_google_provider(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    registry = ModelRegistry(agent_dir, environ={"GEMINI_API_KEY": "g"})
    model = registry.find_known("google", "gemini-2.5-pro")
    assert model is not None and model.api == API and model.reasoning
    assert model.base_url == "https://generativelanguage.googleapis.com/v1beta"
    assert model in registry.available()
    assert registry.get_api_key("google") == "g"
    assert not [
        m for m in ModelRegistry(agent_dir, environ={}).available() if m.provider == "google"
    ]


def _image_results() -> list[Any]:
    def result(call_id: str, text: str) -> dict[str, Any]:
        content: list[dict[str, str]] = [{"type": "image", "data": "aW1n", "mimeType": "image/png"}]
        if text:
            content.insert(0, {"type": "text", "text": text})
        return {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "screenshot",
            "content": content,
            "isError": False,
            "timestamp": 0,
        }

    calls = [
        {"type": "toolCall", "id": cid, "name": "screenshot", "arguments": {}} for cid in ("a", "b")
    ]
    assistant = {
        "role": "assistant",
        "content": calls,
        "api": API,
        "provider": "other",
        "model": "other",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": "toolUse",
        "timestamp": 0,
    }
    return [assistant, result("a", "shot a"), result("b", "")]


async def test_tool_result_images_older_models(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    context = user_context("look")
    context.messages += _image_results()
    await run(server, context=context, id="gemini-2.5-flash", input=("text", "image"))
    contents = server.requests[0].body["contents"]
    image = {"inlineData": {"mimeType": "image/png", "data": "aW1n"}}
    assert contents[2:] == [
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "screenshot",
                        "response": {"output": "shot a"},
                        "id": "a",
                    }
                },
                {
                    "functionResponse": {
                        "name": "screenshot",
                        "response": {"output": "(see attached image)"},
                        "id": "b",
                    }
                },
            ],
        },
        {"role": "user", "parts": [{"text": "Tool result image:"}, image, image]},
    ]


async def test_tool_result_images_nested_for_gemini3(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    context = user_context("look")
    context.messages += _image_results()
    await run(server, context=context, id="gemini-3-flash-preview", input=("text", "image"))
    contents = server.requests[0].body["contents"]
    assert len(contents) == 3
    responses = contents[2]["parts"]
    assert [p["functionResponse"]["id"] for p in responses] == ["a", "b"]
    assert responses[1]["functionResponse"]["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": "aW1n"}}
    ]


async def test_thought_tokens_count_as_output(server: ScriptedServer) -> None:
    body = (
        b'data: {"candidates":[{"content":{"parts":[{"text":"hi"}]},"finishReason":"STOP"}],'
        b'"usageMetadata":{"promptTokenCount":100,"cachedContentTokenCount":60,'
        b'"candidatesTokenCount":5,"thoughtsTokenCount":20}}\r\n\r\n'
    )
    server.add(raw_reply(body))
    usage_counts = (await run(server))[-1]["message"]["usage"]
    assert (usage_counts["input"], usage_counts["cacheRead"], usage_counts["output"]) == (
        40,
        60,
        25,
    )


async def test_blocked_prompt_and_overflow(server: ScriptedServer) -> None:
    server.add(raw_reply(b'data: {"promptFeedback":{"blockReason":"SAFETY"}}\r\n\r\n'))
    events = await run(server)
    assert events[-1]["error"]["errorMessage"] == "The provider blocked the prompt: SAFETY"
    server.add(
        error_reply(
            400,
            "The input token count (1200000) exceeds the maximum number of tokens allowed "
            "(1048576).",
        )
    )
    failed = (await run(server))[-1]["error"]
    assert failed["errorMessage"].startswith("400 Bad Request: The input token count")
    assert is_context_overflow(failed)


async def test_abort(server: ScriptedServer) -> None:
    server.add(text_reply(*["x"] * 50, delay=0.1))
    signal = AbortSignal()
    started = 0.0
    events = []
    model = make_model(server, api=API)
    async for event in stream_google_generative(
        model, user_context(), StreamOptions(api_key="k", signal=signal)
    ):
        events.append(event)
        if event["type"] == "text_delta" and not signal.is_set():
            signal.abort()
            started = time.monotonic()
    assert time.monotonic() - started < 0.5
    assert events[-1]["reason"] == "aborted"


async def test_signature_on_a_closing_empty_part(server: ScriptedServer) -> None:
    signature = base64.b64encode(b"late").decode()
    body = (
        b'data: {"candidates":[{"content":{"parts":[{"text":"hm","thought":true}]}}]}\r\n\r\n'
        b'data: {"candidates":[{"content":{"parts":[{"text":"","thought":true,'
        b'"thoughtSignature":"' + signature.encode() + b'"}]}}]}\r\n\r\n'
        b'data: {"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}]}'
        b"\r\n\r\n"
    )
    server.add(raw_reply(body))
    content = (await run(server))[-1]["message"]["content"]
    assert content == [
        {"type": "thinking", "thinking": "hm", "thinkingSignature": signature},
        {"type": "text", "text": "ok"},
    ]
