"""The OpenAI Responses API and Azure OpenAI clients against the scripted server's Responses
wire (real HTTP on loopback)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from knightcode import AbortSignal
from knightcode._llm.azure_openai import (
    azure_endpoint,
    parse_deployment_map,
    stream_azure_openai_responses,
)
from knightcode._llm.errors import is_context_overflow, is_retryable
from knightcode._llm.openai_convert import build_openai_body
from knightcode._llm.openai_responses import stream_openai_responses
from knightcode._llm.openai_responses_convert import normalize_call_id
from knightcode._llm.types import Context, Model, StreamOptions, Tool
from knightcode._types.messages import AssistantMessage, LlmMessage
from knightcode.testing import (
    ScriptedServer,
    deltas_reply,
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

API = "openai-responses"


def responses_model(server: ScriptedServer, **changes: Any) -> Model:
    return make_model(server, api=API, **changes)


async def run(
    server: ScriptedServer,
    options: StreamOptions | None = None,
    context: Context | None = None,
    **model_changes: Any,
) -> list[dict[str, Any]]:
    return await collect(
        stream_openai_responses(
            responses_model(server, **model_changes),
            context or user_context(),
            options or StreamOptions(api_key="sk-test"),
        )
    )


def body_of(server: ScriptedServer, number: int = -1) -> dict[str, Any]:
    body = server.requests[number].body
    assert isinstance(body, dict)
    return body


def final_message(events: list[dict[str, Any]]) -> AssistantMessage:
    assert events[-1]["type"] == "done", events[-1]
    message: AssistantMessage = events[-1]["message"]
    return message


async def test_text_stream_events_request_and_final_message(server: ScriptedServer) -> None:
    server.add(text_reply("Hel", "lo", usage=usage(input=10, output=2)))
    events = await run(server)
    assert kinds(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    message = final_message(events)
    assert message["content"][0]["text"] == "Hello"
    assert json.loads(message["content"][0]["textSignature"]) == {
        "v": 1,
        "id": "msg_scripted_1",
    }
    assert message["stopReason"] == "stop"
    assert message["api"] == API
    assert message["responseId"] == "resp_scripted_1"
    request = server.requests[0]
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = body_of(server)
    assert body["model"] == "scripted-model"
    assert body["stream"] is True and body["store"] is False
    assert body["max_output_tokens"] == 4096  # the model's maxTokens
    assert body["input"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ]
    assert "reasoning" not in body and "include" not in body and "tools" not in body


async def test_max_output_tokens_is_capped_and_an_explicit_limit_wins(
    server: ScriptedServer,
) -> None:
    server.add(text_reply("a"), text_reply("b"))
    await run(server, max_tokens=128000)
    assert body_of(server)["max_output_tokens"] == 32000
    await run(server, StreamOptions(api_key="k", max_tokens=777, temperature=0.2))
    assert body_of(server)["max_output_tokens"] == 777
    assert body_of(server)["temperature"] == 0.2
    assert "prompt_cache_retention" not in body_of(server)


async def test_long_cache_retention(server: ScriptedServer) -> None:
    server.add(text_reply("a"), text_reply("b"))
    await run(server, StreamOptions(cache_retention="long"))
    assert body_of(server)["prompt_cache_retention"] == "24h"
    await run(
        server,
        StreamOptions(cache_retention="long"),
        compat={"supportsLongCacheRetention": False},
    )
    assert "prompt_cache_retention" not in body_of(server)


async def test_many_deltas(server: ScriptedServer) -> None:
    server.add(deltas_reply(5000, "ab", usage=usage(input=1, output=5000)))
    events = await run(server)
    assert kinds(events).count("text_delta") == 5000
    message = final_message(events)
    assert message["content"][0]["text"] == "ab" * 5000
    assert message["usage"]["output"] == 5000


async def test_usage_subtracts_cached_tokens_and_costs(server: ScriptedServer) -> None:
    server.add(text_reply("ok", usage=usage(input=1000, output=200, cache_read=3000)))
    message = final_message(await run(server))
    assert message["usage"]["input"] == 1000
    assert message["usage"]["cacheRead"] == 3000
    assert message["usage"]["output"] == 200
    assert message["usage"]["totalTokens"] == 4200
    # 1000 * 3 + 200 * 15 + 3000 * 0.3 per million
    assert message["usage"]["cost"]["total"] == pytest.approx((3000 + 3000 + 900) / 1e6)


async def test_reasoning_summary_is_thinking_and_the_encrypted_item_goes_back(
    server: ScriptedServer,
) -> None:
    server.add(
        reply(thinking=["Let me ", "think."], text="Answer"),
        text_reply("Second"),
    )
    options = StreamOptions(api_key="k", reasoning="high")
    events = await run(server, options, reasoning=True)
    assert kinds(events)[:5] == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
    ]
    first = body_of(server)
    assert first["reasoning"] == {"effort": "high", "summary": "auto"}
    assert first["include"] == ["reasoning.encrypted_content"]
    assert first["input"][0]["role"] == "developer"  # a reasoning model's system prompt
    message = final_message(events)
    thinking = message["content"][0]
    assert thinking["type"] == "thinking" and thinking["thinking"] == "Let me think."
    item = json.loads(thinking["thinkingSignature"])
    assert item["encrypted_content"] == "enc-scripted-1"

    history: list[LlmMessage] = [
        {"role": "user", "content": "hi", "timestamp": 0},
        message,
        {"role": "user", "content": "and now?", "timestamp": 0},
    ]
    await run(server, options, Context("sys", history), reasoning=True)
    second = body_of(server)["input"]
    assert second[2] == {
        "id": "rs_scripted_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Let me think."}],
        "encrypted_content": "enc-scripted-1",
    }
    assert second[3]["type"] == "message" and second[3]["id"] == "msg_scripted_1"
    assert second[3]["content"] == [{"type": "output_text", "text": "Answer", "annotations": []}]
    assert second[4] == {"role": "user", "content": [{"type": "input_text", "text": "and now?"}]}


async def test_thinking_levels_and_the_level_map(server: ScriptedServer) -> None:
    server.add(*(text_reply("ok") for _ in range(4)))
    levels = {"xhigh": "xhigh", "low": None}
    await run(server, StreamOptions(reasoning="xhigh"), reasoning=True, thinking_level_map=levels)
    assert body_of(server)["reasoning"]["effort"] == "xhigh"
    await run(server, StreamOptions(reasoning="low"), reasoning=True, thinking_level_map=levels)
    assert "reasoning" not in body_of(server)
    await run(server, StreamOptions(reasoning="xhigh"), reasoning=True)
    assert body_of(server)["reasoning"]["effort"] == "high"  # no xhigh unless mapped
    # Off on GPT-5, which cannot switch reasoning off: the reference's developer message.
    await run(server, StreamOptions(reasoning="off"), reasoning=True, id="gpt-5", name="GPT-5")
    body = body_of(server)
    assert "reasoning" not in body
    assert body["input"][-1]["content"][0]["text"] == "# Juice: 0 !important"


async def test_tool_calls_ids_arguments_and_results(server: ScriptedServer) -> None:
    calls = [
        tool_call("call_a", "read", {"path": "a.txt"}, split=3),
        tool_call("call_b", "bash", {"command": "ls"}),
    ]
    server.add(tool_call_reply(calls, text="Reading."), text_reply("done"))
    tool = Tool("read", "Read a file", {"type": "object", "properties": {}})
    context = Context("sys", [{"role": "user", "content": "go", "timestamp": 0}], [tool])
    events = await run(server, context=context)
    body = body_of(server)
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        }
    ]
    assert kinds(events).count("toolcall_delta") == 4
    message = final_message(events)
    assert message["stopReason"] == "toolUse"
    first, second = (block for block in message["content"] if block["type"] == "toolCall")
    assert first["id"] == "call_a|fc_scripted_1_0"
    assert first["arguments"] == {"path": "a.txt"}
    assert second["id"] == "call_b|fc_scripted_1_1" and second["arguments"] == {"command": "ls"}

    results: list[LlmMessage] = [
        {
            "role": "toolResult",
            "toolCallId": block["id"],
            "toolName": block["name"],
            "content": [{"type": "text", "text": f"result of {block['name']}"}],
            "isError": False,
            "timestamp": 0,
        }
        for block in (first, second)
    ]
    context.messages.extend([message, *results])
    await run(server, context=context)
    items = body_of(server)["input"]
    assert items[3] == {
        "type": "function_call",
        "call_id": "call_a",
        "id": "fc_scripted_1_0",
        "name": "read",
        "arguments": '{"path": "a.txt"}',
    }
    assert items[5] == {
        "type": "function_call_output",
        "call_id": "call_a",
        "output": "result of read",
    }
    assert items[6]["call_id"] == "call_b"


def assistant_turn(
    *content: Any, model: str = "scripted-model", provider: str = "scripted"
) -> AssistantMessage:
    """A finished assistant message of the Responses API with ``content``."""
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    return {
        "role": "assistant",
        "content": list(content),
        "api": API,
        "provider": provider,
        "model": model,
        "usage": {**zero, "totalTokens": 0, "cost": {**zero, "total": 0}},
        "stopReason": "toolUse",
        "timestamp": 0,
    }


def tool_result(call_id: str, text: str = "a") -> LlmMessage:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "ls",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 0,
    }


USER: LlmMessage = {"role": "user", "content": "go", "timestamp": 0}


async def test_another_models_call_ids_drop_the_item_id(server: ScriptedServer) -> None:
    """fc_ ids of another model of the same API were paired with reasoning not sent now."""
    server.add(text_reply("ok"))
    call = {"type": "toolCall", "id": "call_x|fc_1", "name": "ls", "arguments": {}}
    other = assistant_turn(call, model="another-model")
    await run(server, context=Context(None, [USER, other, tool_result("call_x|fc_1")]))
    call = body_of(server)["input"][1]
    assert call == {"type": "function_call", "call_id": "call_x", "name": "ls", "arguments": "{}"}


async def test_a_turn_whose_reasoning_cannot_go_back_drops_item_ids(
    server: ScriptedServer,
) -> None:
    server.add(text_reply("ok"), text_reply("ok"))
    call = {"type": "toolCall", "id": "call_y|fc_2", "name": "ls", "arguments": {}}
    turn = assistant_turn({"type": "thinking", "thinking": "no signature"}, call)
    await run(server, context=Context(None, [USER, turn, tool_result("call_y|fc_2")]))
    assert "id" not in body_of(server)["input"][1]
    turn = assistant_turn(call)  # no reasoning at all: the item id stays
    await run(server, context=Context(None, [USER, turn, tool_result("call_y|fc_2")]))
    assert body_of(server)["input"][1]["id"] == "fc_2"


def test_call_ids_are_normalized_for_the_api() -> None:
    assert normalize_call_id("call_1|fc_2") == "call_1|fc_2"
    assert normalize_call_id("call.1|item/2") == "call_1|fc_item_2"
    long = normalize_call_id("c" * 80 + "|" + "fc" + "x" * 80)
    call_id, item_id = long.split("|")
    assert len(call_id) == 64 and len(item_id) == 64
    assert normalize_call_id("toolu_01") == "toolu_01"  # another provider's id
    assert normalize_call_id("tool.01/x") == "tool_01_x"


def test_switching_to_chat_completions_sends_the_call_id_alone() -> None:
    """A session started on the Responses API continued on a chat-completions model: OpenAI
    limits tool-call ids to 40 characters, the item id can be far longer."""
    model = Model("openrouter", "m", "M", "openai-completions", "https://openrouter.ai/api/v1")
    call_id = "call_a|fc_" + "x" * 100
    call = {"type": "toolCall", "id": call_id, "name": "ls", "arguments": {}}
    history = [USER, assistant_turn(call, provider="openai", model="gpt-5"), tool_result(call_id)]
    body = build_openai_body(model, Context(None, history), StreamOptions())
    messages: Any = body["messages"]
    assert messages[1]["tool_calls"][0]["id"] == "call_a"
    assert messages[2]["tool_call_id"] == "call_a"


async def test_images_are_input_images_when_the_model_takes_them(server: ScriptedServer) -> None:
    server.add(text_reply("a"), text_reply("b"))
    image = {"type": "image", "data": "QUJD", "mimeType": "image/png"}
    messages: list[LlmMessage] = [
        {"role": "user", "content": [{"type": "text", "text": "look"}, image], "timestamp": 0}  # type: ignore[list-item]
    ]
    await run(server, context=Context(None, messages), input=("text", "image"))
    parts = body_of(server)["input"][0]["content"]
    assert parts[1] == {
        "type": "input_image",
        "detail": "auto",
        "image_url": "data:image/png;base64,QUJD",
    }
    await run(server, context=Context(None, messages))  # a text-only model
    assert body_of(server)["input"][0]["content"] == [{"type": "input_text", "text": "look"}]


async def test_finish_length_is_a_length_stop(server: ScriptedServer) -> None:
    server.add(reply(text="cut", finish="length"))
    message = final_message(await run(server))
    assert message["stopReason"] == "length"


async def test_http_error_body_is_the_message(server: ScriptedServer) -> None:
    server.add(error_reply(400, "Invalid 'input[2].id': bad id"))
    events = await run(server)
    assert kinds(events) == ["error"]
    assert events[0]["error"]["errorMessage"] == "400 Bad Request: Invalid 'input[2].id': bad id"


async def test_http_429_retry_after_is_passed_on(server: ScriptedServer) -> None:
    server.add(error_reply(429, "Rate limit", {"retry-after": "3"}))
    events = await run(server)
    assert events[-1]["retryAfterMs"] == 3000
    assert is_retryable(events[-1]["error"])


async def test_transient_failures_are_retried_inside_the_request(server: ScriptedServer) -> None:
    server.add(error_reply(503, "busy"), text_reply("ok"))
    events = await run(server, StreamOptions(api_key="k", max_retries=1))
    assert final_message(events)["content"][0]["text"] == "ok"
    assert len(server.requests) == 2


async def test_response_failed_is_an_error_with_its_code(server: ScriptedServer) -> None:
    server.add(stream_error_reply("The server had an error", text=["par", "tial"]))
    events = await run(server)
    error = events[-1]
    assert error["type"] == "error" and error["reason"] == "error"
    assert error["error"]["errorMessage"] == "overloaded_error: The server had an error"
    assert error["error"]["content"][0]["text"] == "partial"


async def test_error_event_is_an_error(server: ScriptedServer) -> None:
    body = (
        'event: error\ndata: {"type":"error","code":"rate_limit_exceeded",'
        '"message":"Slow down","sequence_number":0}\n\n'
    )
    server.add(raw_reply(body))
    events = await run(server)
    assert events[-1]["error"]["errorMessage"] == "Error Code rate_limit_exceeded: Slow down"


async def test_a_cut_stream_is_a_retryable_error(server: ScriptedServer) -> None:
    server.add(drop_reply(4))
    events = await run(server)
    assert events[-1]["type"] == "error"
    assert is_retryable(events[-1]["error"])


async def test_a_stream_without_completion_is_terminated(server: ScriptedServer) -> None:
    created = '{"type":"response.created","response":{"id":"r1"}}'
    server.add(raw_reply(f"event: response.created\ndata: {created}\n\n"))
    events = await run(server)
    assert events[-1]["error"]["errorMessage"].startswith("terminated")


async def test_abort_mid_stream_returns_promptly(server: ScriptedServer) -> None:
    server.add(text_reply(*[f"t{i} " for i in range(50)], delay=0.1))
    signal = AbortSignal()
    events = []
    aborted_at = 0.0
    async for event in stream_openai_responses(
        responses_model(server), user_context(), StreamOptions(signal=signal)
    ):
        events.append(event)
        if event["type"] == "text_delta" and not signal.is_set():
            asyncio.get_running_loop().call_later(0.02, signal.abort)
            aborted_at = time.monotonic() + 0.02
    assert time.monotonic() - aborted_at < 0.5
    assert events[-1]["type"] == "error" and events[-1]["reason"] == "aborted"


def sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


COMPLETED = {"type": "response.completed", "response": {"id": "r", "status": "completed"}}


async def test_raw_reasoning_text_and_a_message_without_its_item(server: ScriptedServer) -> None:
    """Open-weight models stream reasoning_text; some servers skip output_item.added."""
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": []}
    server.add(
        raw_reply(
            sse(
                {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
                {"type": "response.reasoning_text.delta", "output_index": 0, "delta": "hmm"},
                {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
                {"type": "response.output_text.delta", "output_index": 1, "delta": "Hi"},
                {"type": "response.output_text.delta", "output_index": 1, "delta": "!"},
                COMPLETED,
            )
        )
    )
    message = final_message(await run(server))
    assert message["content"] == [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "Hi!"},
    ]


async def test_arguments_sent_only_in_the_done_item(server: ScriptedServer) -> None:
    call = {"id": "fc_9", "type": "function_call", "call_id": "c9", "name": "ls", "arguments": ""}
    server.add(
        raw_reply(
            sse(
                {"type": "response.output_item.added", "output_index": 0, "item": call},
                {
                    "type": "response.output_item.done",
                    "output_index": 0,
                    "item": {**call, "arguments": '{"dir": "."}'},
                },
                COMPLETED,
            )
        )
    )
    message = final_message(await run(server))
    assert message["content"][0]["arguments"] == {"dir": "."}
    assert message["stopReason"] == "toolUse"


async def test_a_context_overflow_in_response_failed_is_recognised(server: ScriptedServer) -> None:
    overflow = "Your input exceeds the context window of this model."
    server.add(stream_error_reply(overflow, error_type="context_length_exceeded"))
    events = await run(server)
    assert is_context_overflow(events[-1]["error"], 1000)


# --- Azure OpenAI ---


def azure_model(server: ScriptedServer, **changes: Any) -> Model:
    return make_model(server, api="azure-openai-responses", **changes)


def root(server: ScriptedServer) -> str:
    return f"http://127.0.0.1:{server.port}"


async def test_azure_base_url_version_key_header_and_deployment(server: ScriptedServer) -> None:
    server.add(text_reply("from azure"))
    environ = {
        "AZURE_OPENAI_BASE_URL": root(server) + "/openai/v1/",
        "AZURE_OPENAI_API_VERSION": "2025-04-01-preview",
        "AZURE_OPENAI_DEPLOYMENT_NAME_MAP": "other=x, scripted-model=my-deployment",
    }
    events = await collect(
        stream_azure_openai_responses(
            azure_model(server, base_url=""),
            user_context(),
            StreamOptions(api_key="az-key"),
            environ=environ,
        )
    )
    message = final_message(events)
    assert message["api"] == "azure-openai-responses"
    assert message["content"][0]["text"] == "from azure"
    request = server.requests[0]
    assert request.path == "/openai/v1/responses?api-version=2025-04-01-preview"
    assert request.headers["api-key"] == "az-key"
    assert "authorization" not in request.headers
    assert body_of(server)["model"] == "my-deployment"


async def test_azure_uses_the_model_base_url_and_default_version(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    model = azure_model(server, base_url=root(server) + "/openai/v1")
    events = await collect(
        stream_azure_openai_responses(model, user_context(), StreamOptions(api_key="k"), environ={})
    )
    assert final_message(events)["content"][0]["text"] == "ok"
    assert server.requests[0].path == "/openai/v1/responses?api-version=v1"
    assert body_of(server)["model"] == "scripted-model"


async def test_azure_without_a_base_url_says_what_to_set(server: ScriptedServer) -> None:
    events = await collect(
        stream_azure_openai_responses(
            azure_model(server, base_url=""), user_context(), StreamOptions(api_key="k"), environ={}
        )
    )
    assert kinds(events) == ["error"]
    message = events[0]["error"]["errorMessage"]
    assert "AZURE_OPENAI_BASE_URL" in message and "AZURE_OPENAI_RESOURCE_NAME" in message
    assert server.requests == []


def test_azure_resource_name_builds_the_url(server: ScriptedServer) -> None:
    model = azure_model(server, base_url="")
    target = azure_endpoint(
        model, StreamOptions(api_key="k"), {"AZURE_OPENAI_RESOURCE_NAME": "my-res"}
    )
    assert target.url == "https://my-res.openai.azure.com/openai/v1/responses?api-version=v1"
    assert parse_deployment_map(" a=b ,broken, =x, c = d ") == {"a": "b", "c": "d"}
