"""The Amazon Bedrock Converse client against the scripted server's event-stream wire format.

Requests are signed by the real botocore; the test checks the signature independently with the
published SigV4 algorithm (hashlib/hmac), so a wrong payload hash or canonical path fails here.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knightcode import AbortSignal
from knightcode._llm.aws_env import bedrock_region
from knightcode._llm.bedrock_auth import BedrockAuthError, resolve_bedrock_auth
from knightcode._llm.bedrock_converse import bedrock_url, stream_bedrock_converse
from knightcode._llm.bedrock_eventstream import EventStreamDecoder, EventStreamError
from knightcode._llm.errors import is_context_overflow, is_retryable
from knightcode._llm.registry import ModelRegistry
from knightcode._llm.types import Context, StreamOptions, Tool
from knightcode.testing import (
    ScriptedRequest,
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
from knightcode.testing._bedrock_wire import encode_message

from .conftest import collect, kinds, make_model, user_context

API = "bedrock-converse-stream"
CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
ACCESS_KEY = "AKIDSCRIPTEDTEST"
SECRET_KEY = "scripted/secret/key/0123456789abcdefghij"


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A clean AWS environment: no ~/.aws files, no instance metadata, static test keys."""
    for name in (
        "AWS_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_SESSION_TOKEN",
        "AWS_DEFAULT_REGION",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    yield


async def run(
    server: ScriptedServer,
    options: StreamOptions | None = None,
    context: Context | None = None,
    **model_changes: Any,
) -> list[dict[str, Any]]:
    model = make_model(server, api=API, id=CLAUDE, **model_changes)
    # The registry hands over the marker variable's value as the "key" (see bedrock_auth).
    return await collect(
        stream_bedrock_converse(
            model, context or user_context(), options or StreamOptions(api_key=ACCESS_KEY)
        )
    )


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def verify_sigv4(request: ScriptedRequest, region: str, secret: str) -> str:
    """Check the request's SigV4 signature from scratch; returns the Authorization header."""
    authorization = request.headers["authorization"]
    match = re.fullmatch(
        r"AWS4-HMAC-SHA256 Credential=(\w+)/(\d{8})/([\w-]+)/bedrock/aws4_request, "
        r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})",
        authorization,
    )
    assert match, authorization
    _, day, signed_region, signed, signature = match.groups()
    assert signed_region == region
    names = signed.split(";")
    assert {"host", "x-amz-date", "x-amz-content-sha256"} <= set(names)
    payload_hash = hashlib.sha256(request.raw).hexdigest()
    assert request.headers["x-amz-content-sha256"] == payload_hash
    canonical = "\n".join(
        [
            "POST",
            urllib.parse.quote(request.path, safe="/~"),  # non-S3 services: encoded twice
            "",
            "".join(f"{name}:{request.headers[name].strip()}\n" for name in names),
            signed,
            payload_hash,
        ]
    )
    amz_date = request.headers["x-amz-date"]
    scope = f"{day}/{region}/bedrock/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = _hmac(f"AWS4{secret}".encode(), day)
    for part in (region, "bedrock", "aws4_request"):
        key = _hmac(key, part)
    assert hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest() == signature
    return authorization


async def test_text_stream_signed_with_sigv4(server: ScriptedServer) -> None:
    server.add(
        text_reply("Hel", "lo", usage=usage(input=10, output=5, cache_read=3, cache_write=2))
    )
    events = await run(server)
    assert kinds(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    message = events[-1]["message"]
    assert message["content"] == [{"type": "text", "text": "Hello"}]
    assert message["stopReason"] == "stop"
    assert message["usage"]["input"] == 10
    assert message["usage"]["output"] == 5
    assert message["usage"]["cacheRead"] == 3
    assert message["usage"]["cacheWrite"] == 2
    request = server.requests[0]
    assert (
        request.path == "/v1/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    )
    authorization = verify_sigv4(request, "eu-west-3", SECRET_KEY)
    assert f"Credential={ACCESS_KEY}/" in authorization
    assert SECRET_KEY not in str(request.headers)


async def test_session_token_is_sent_and_signed(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SESSION_TOKEN", "scripted-session-token")
    server.add(text_reply("ok"))
    await run(server)
    request = server.requests[0]
    assert request.headers["x-amz-security-token"] == "scripted-session-token"
    assert "x-amz-security-token" in verify_sigv4(request, "eu-west-3", SECRET_KEY)


async def test_bearer_token(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-123")
    server.add(text_reply("ok"), text_reply("ok"))
    await run(server, StreamOptions(api_key="bedrock-api-key-123"))
    assert server.requests[0].headers["authorization"] == "Bearer bedrock-api-key-123"
    # an explicit key (--api-key, auth.json, models.json apiKey) is a bearer token too
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK")
    await run(server, StreamOptions(api_key="explicit-key-456"))
    assert server.requests[1].headers["authorization"] == "Bearer explicit-key-456"


def test_no_credentials_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(BedrockAuthError, match="AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK"):
        resolve_bedrock_auth(None)


def test_missing_botocore_names_the_extra() -> None:
    # botocore is installed here; a child interpreter where importing it fails stands in for a
    # machine without the extra.
    code = (
        "import sys; sys.modules['botocore'] = None\n"
        "from knightcode._llm.bedrock_auth import resolve_bedrock_auth, BedrockAuthError\n"
        "try:\n    resolve_bedrock_auth(None)\n"
        "except BedrockAuthError as exc:\n    print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "pip install 'knightcode[bedrock]'" in result.stdout


def test_url_uses_the_region_for_aws_hosts() -> None:
    with ScriptedServer() as server:
        model = make_model(server, api=API, id="amazon.nova-pro-v1:0")
    aws = model.__class__(
        **{**model.__dict__, "base_url": "https://bedrock-runtime.us-east-1.amazonaws.com"}
    )
    assert bedrock_url(aws, "ap-south-1") == (
        "https://bedrock-runtime.ap-south-1.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse-stream"
    )


async def test_request_body(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    context = user_context("hello")
    context.tools = [
        Tool(
            "read",
            "Read a file",
            {"properties": {"path": {"type": "string"}}, "required": ["path"]},
        )
    ]
    options = StreamOptions(
        api_key=ACCESS_KEY, reasoning="low", thinking_budgets={"low": 1234}, temperature=0.2
    )
    await run(server, options, context, reasoning=True, max_tokens=64000)
    body = server.requests[0].body
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "hello"}, {"cachePoint": {"type": "default"}}]}
    ]
    assert body["system"] == [{"text": "You are terse."}, {"cachePoint": {"type": "default"}}]
    assert body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "read",
                    "description": "Read a file",
                    "inputSchema": {
                        "json": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}},
                            "required": ["path"],
                        }
                    },
                }
            }
        ]
    }
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 1234},
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
    }
    assert body["inferenceConfig"] == {"temperature": 0.2, "maxTokens": 64000}


async def test_non_claude_model_gets_no_claude_fields(server: ScriptedServer) -> None:
    server.add(text_reply("ok"))
    model = make_model(server, api=API, id="amazon.nova-pro-v1:0", reasoning=True)
    await collect(
        stream_bedrock_converse(
            model, user_context("hi"), StreamOptions(api_key=ACCESS_KEY, reasoning="high")
        )
    )
    body = server.requests[0].body
    assert "additionalModelRequestFields" not in body
    assert body["messages"] == [{"role": "user", "content": [{"text": "hi"}]}]
    assert body["inferenceConfig"] == {"maxTokens": 4096}


async def test_thinking_and_tool_calls(server: ScriptedServer) -> None:
    server.add(
        tool_call_reply(
            [tool_call("tooluse_1", "read", {"path": "a.txt"}, split=3)],
            text="Reading",
            thinking=["Let me ", "look"],
        )
    )
    events = await run(server, StreamOptions(api_key=ACCESS_KEY, reasoning="high"), reasoning=True)
    assert kinds(events) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    message = events[-1]["message"]
    assert message["stopReason"] == "toolUse"
    assert message["content"][0] == {
        "type": "thinking",
        "thinking": "Let me look",
        "thinkingSignature": "scripted-signature-1",
    }
    assert message["content"][2] == {
        "type": "toolCall",
        "id": "tooluse_1",
        "name": "read",
        "arguments": {"path": "a.txt"},
    }

    # the next request sends the signed reasoning and the tool result back
    server.add(text_reply("done"))
    context = user_context("read it")
    context.messages += [
        message,
        {
            "role": "toolResult",
            "toolCallId": "tooluse_1",
            "toolName": "read",
            "content": [{"type": "text", "text": "A"}],
            "isError": True,
            "timestamp": 0,
        },
    ]
    await run(server, StreamOptions(api_key=ACCESS_KEY), context, reasoning=True)
    sent = server.requests[1].body["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": [
            {
                "reasoningContent": {
                    "reasoningText": {"text": "Let me look", "signature": "scripted-signature-1"}
                }
            },
            {"text": "Reading"},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "read", "input": {"path": "a.txt"}}},
        ],
    }
    assert sent[2]["content"][0] == {
        "toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "A"}], "status": "error"}
    }


async def test_stop_reasons(server: ScriptedServer) -> None:
    server.add(text_reply("cut", finish="length"))
    assert (await run(server))[-1]["reason"] == "length"


async def test_http_error(server: ScriptedServer) -> None:
    server.add(error_reply(429, "Too many requests, please wait before trying again."))
    events = await run(server)
    assert events[-1]["type"] == "error"
    assert events[-1]["error"]["errorMessage"] == (
        "429 Too Many Requests: Too many requests, please wait before trying again."
    )
    assert server.requests[0].headers["authorization"].startswith("AWS4-HMAC-SHA256")


async def test_exception_in_stream_is_retryable(server: ScriptedServer) -> None:
    server.add(
        stream_error_reply("Rate exceeded", text=["par"], error_type="throttlingException"),
        stream_error_reply("Stream broke"),
    )
    first = (await run(server))[-1]
    assert first["type"] == "error"
    assert first["error"]["errorMessage"] == "throttlingException: Rate exceeded"
    assert first["error"]["content"] == [{"type": "text", "text": "par"}]
    second = (await run(server))[-1]
    assert second["error"]["errorMessage"] == "modelStreamErrorException: Stream broke"
    assert is_retryable(first["error"]) and is_retryable(second["error"])


async def test_corrupted_stream_fails(server: ScriptedServer) -> None:
    good = encode_message(
        {":event-type": "messageStart", ":message-type": "event"}, b'{"role":"assistant"}'
    )
    broken = bytearray(good)
    broken[-6] ^= 0xFF  # a payload byte: the message CRC no longer matches
    server.add(raw_reply(bytes(broken), content_type="application/vnd.amazon.eventstream"))
    events = await run(server)
    assert events[-1]["type"] == "error"
    assert "checksum" in events[-1]["error"]["errorMessage"]


async def test_cut_stream_fails(server: ScriptedServer) -> None:
    start = encode_message(
        {":event-type": "messageStart", ":message-type": "event"}, b'{"role":"assistant"}'
    )
    server.add(raw_reply(start + start[:10], content_type="application/vnd.amazon.eventstream"))
    events = await run(server)
    assert events[-1]["type"] == "error"
    assert "terminated" in events[-1]["error"]["errorMessage"]


def test_decoder_splits_and_checks() -> None:
    one = encode_message({":event-type": "a"}, b"{}")
    two = encode_message({":event-type": "b", ":message-type": "event"}, b'{"x":1}')
    decoder = EventStreamDecoder()
    data = one + two
    got = []
    for position in range(len(data)):  # one byte at a time: every split point
        got.extend(decoder.feed(data[position : position + 1]))
    assert [(m.headers, m.payload) for m in got] == [
        ({":event-type": "a"}, b"{}"),
        ({":event-type": "b", ":message-type": "event"}, b'{"x":1}'),
    ]
    with pytest.raises(EventStreamError, match="prelude"):
        EventStreamDecoder().feed(b"\x00" * 8 + b"\x01\x02\x03\x04")


async def test_reasoning_reply_without_tools(server: ScriptedServer) -> None:
    server.add(reply(thinking="hm", text="fine"))
    events = await run(server, StreamOptions(api_key=ACCESS_KEY, reasoning="high"), reasoning=True)
    assert [b["type"] for b in events[-1]["message"]["content"]] == ["thinking", "text"]


def test_builtin_provider_is_available_with_any_aws_credential(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    for environ in (
        {"AWS_ACCESS_KEY_ID": "A"},
        {"AWS_PROFILE": "dev"},
        {"AWS_BEARER_TOKEN_BEDROCK": "t"},
    ):
        registry = ModelRegistry(agent_dir, environ=environ)
        refs = [m.ref for m in registry.available() if m.provider == "amazon-bedrock"]
        assert "amazon-bedrock/amazon.nova-pro-v1:0" in refs
        claude = registry.find_known("amazon-bedrock", CLAUDE)
        assert claude is not None and claude.api == API
    registry = ModelRegistry(agent_dir, environ={})
    assert not [m for m in registry.available() if m.provider == "amazon-bedrock"]


def test_the_documented_models_json_example_loads(tmp_path: Path) -> None:
    docs = (Path(__file__).parents[2] / "docs" / "models.md").read_text()
    blocks = re.findall(r"```json\n(.*?)```", docs, re.DOTALL)
    (example,) = [block for block in blocks if "bedrock-converse-stream" in block]
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "models.json").write_text(example)
    registry = ModelRegistry(agent_dir, environ={})
    model = registry.find_known("bedrock-eu", "eu.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert model is not None and model.api == API and model in registry.available()
    assert bedrock_url(model, "eu-central-1").startswith(
        "https://bedrock-runtime.eu-central-1.amazonaws.com/model/eu.anthropic."
    )


def test_region_order() -> None:
    host = "https://bedrock-runtime.eu-central-1.amazonaws.com"
    assert bedrock_region({"AWS_REGION": "a-1", "AWS_DEFAULT_REGION": "b-2"}, host) == "a-1"
    assert bedrock_region({"AWS_DEFAULT_REGION": "b-2"}, host) == "b-2"
    assert bedrock_region({}, host, "ap-south-1") == "eu-central-1"
    assert bedrock_region({}, "http://127.0.0.1:8080", "ap-south-1") == "ap-south-1"
    assert bedrock_region({}, "http://127.0.0.1:8080") == "us-east-1"


async def test_overflow_is_recognised(server: ScriptedServer) -> None:
    server.add(error_reply(400, "Input is too long for requested model."))
    failed = (await run(server))[-1]["error"]
    assert failed["errorMessage"] == "400 Bad Request: Input is too long for requested model."
    assert is_context_overflow(failed)


async def test_abort(server: ScriptedServer) -> None:
    server.add(text_reply(*["x"] * 50, delay=0.1))
    signal = AbortSignal()
    started = 0.0
    events = []
    model = make_model(server, api=API, id=CLAUDE)
    async for event in stream_bedrock_converse(
        model, user_context(), StreamOptions(api_key=ACCESS_KEY, signal=signal)
    ):
        events.append(event)
        if event["type"] == "text_delta" and not signal.is_set():
            signal.abort()
            started = time.monotonic()
    assert time.monotonic() - started < 0.5
    assert events[-1]["reason"] == "aborted"


async def test_aws_access_error_body(server: ScriptedServer) -> None:
    body = '{"Message":"User: arn:aws:iam::1:user/x is not authorized to perform: bedrock:Invoke"}'
    server.add(raw_reply(body, status=403, content_type="application/json"))
    failed = (await run(server))[-1]["error"]
    assert failed["errorMessage"] == (
        "403 Forbidden: User: arn:aws:iam::1:user/x is not authorized to perform: bedrock:Invoke"
    )
