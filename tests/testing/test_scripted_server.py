"""The scripted server itself, driven by plain HTTP clients (no knightcode client code)."""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any

import httpx
import pytest

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


@pytest.fixture
def server() -> Any:
    with ScriptedServer() as running:
        yield running


def sse_data(body: bytes) -> list[Any]:
    """The data payloads of an SSE body, JSON-decoded where possible."""
    out: list[Any] = []
    for block in body.decode().split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data: "):
                payload = line[6:]
                out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def sse_names(body: bytes) -> list[str]:
    return [line[7:] for line in body.decode().split("\n") if line.startswith("event: ")]


def post(server: ScriptedServer, path: str, body: dict[str, Any], **kwargs: Any) -> httpx.Response:
    return httpx.post(server.base_url + path, json=body, timeout=10, **kwargs)


def chat(server: ScriptedServer, stream: bool = True, include_usage: bool = True) -> httpx.Response:
    body: dict[str, Any] = {
        "model": "m1",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": stream,
    }
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    return post(server, "/chat/completions", body)


def test_lifecycle_and_base_url() -> None:
    server = ScriptedServer()
    with pytest.raises(RuntimeError):
        _ = server.base_url
    server.start()
    try:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert httpx.get(server.base_url + "/models").status_code == 200
    finally:
        server.stop()
    server.stop()  # idempotent
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.base_url + "/models")


def test_models_endpoint() -> None:
    with ScriptedServer(models=["a", "b"]) as server:
        data = httpx.get(server.base_url + "/models").json()
    assert [m["id"] for m in data["data"]] == ["a", "b"]
    assert data["object"] == "list"


def test_openai_text_stream(server: ScriptedServer) -> None:
    server.add(text_reply("Hel", "lo", usage=usage(input=10, output=2, cache_read=4)))
    response = chat(server)
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["transfer-encoding"] == "chunked"
    chunks = sse_data(response.content)
    assert chunks[-1] == "[DONE]"
    deltas = [c["choices"][0]["delta"] for c in chunks[:-2]]
    assert deltas == [{"role": "assistant", "content": "Hel"}, {"content": "lo"}, {}]
    assert chunks[-3]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-2]["choices"] == []
    assert chunks[-2]["usage"] == {
        "prompt_tokens": 14,
        "completion_tokens": 2,
        "total_tokens": 16,
        "prompt_tokens_details": {"cached_tokens": 4},
    }
    assert all(c["model"] == "m1" and c["object"] == "chat.completion.chunk" for c in chunks[:-1])


def test_openai_usage_only_when_requested(server: ScriptedServer) -> None:
    server.add(text_reply("x"))
    chunks = sse_data(chat(server, include_usage=False).content)
    assert not any("usage" in c for c in chunks if isinstance(c, dict))


def test_openai_thinking_and_tool_calls(server: ScriptedServer) -> None:
    server.add(
        reply(
            thinking=["a", "b"],
            tool_calls=[
                tool_call("c1", "read", {"path": "x"}, split=3),
                tool_call("c2", "ls", {"d": 1}, split=2),
            ],
            interleave=True,
        )
    )
    chunks = sse_data(chat(server).content)
    deltas = [c["choices"][0]["delta"] for c in chunks if isinstance(c, dict) and c["choices"]]
    assert [d.get("reasoning_content") for d in deltas[:2]] == ["a", "b"]
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert [c["index"] for c in calls] == [0, 1, 0, 1, 0]  # round-robin by index
    assert calls[0]["id"] == "c1" and calls[0]["function"]["name"] == "read"
    assert "id" not in calls[2]
    joined = {0: "", 1: ""}
    for c in calls:
        joined[c["index"]] += c["function"]["arguments"]
    assert joined == {0: '{"path": "x"}', 1: '{"d": 1}'}
    assert [
        c["choices"][0]["finish_reason"] for c in chunks if isinstance(c, dict) and c["choices"]
    ][-1] == "tool_calls"


def test_openai_plain_json(server: ScriptedServer) -> None:
    server.add(
        tool_call_reply(
            [tool_call("c1", "read", {"p": 1})], text="Sure", usage=usage(input=5, output=1)
        )
    )
    data = chat(server, stream=False).json()
    message = data["choices"][0]["message"]
    assert message["content"] == "Sure"
    assert message["tool_calls"][0]["function"] == {"name": "read", "arguments": '{"p": 1}'}
    assert data["choices"][0]["finish_reason"] == "tool_calls"
    assert data["usage"]["prompt_tokens"] == 5


def test_anthropic_stream(server: ScriptedServer) -> None:
    server.add(
        reply(
            thinking="hmm",
            text=["Hi", "!"],
            tool_calls=[tool_call("t1", "read", {"p": 1}, split=2)],
            usage=usage(input=7, output=3, cache_read=2, cache_write=1),
        )
    )
    response = post(
        server, "/messages", {"model": "claude", "messages": [], "stream": True, "max_tokens": 10}
    )
    names = sse_names(response.content)
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    events = sse_data(response.content)
    assert events[0]["message"]["usage"]["input_tokens"] == 7
    assert events[2]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert events[4]["delta"]["type"] == "signature_delta"
    assert events[10]["content_block"] == {
        "type": "tool_use",
        "id": "t1",
        "name": "read",
        "input": {},
    }
    assert events[11]["delta"]["type"] == "input_json_delta"
    assert events[14]["delta"]["stop_reason"] == "tool_use"
    assert events[14]["usage"] == {
        "input_tokens": 7,
        "cache_creation_input_tokens": 1,
        "cache_read_input_tokens": 2,
        "output_tokens": 3,
    }


def test_anthropic_plain_json(server: ScriptedServer) -> None:
    server.add(text_reply("Hello"))
    data = post(server, "/messages", {"model": "claude", "messages": [], "max_tokens": 10}).json()
    assert (
        data["content"] == [{"type": "text", "text": "Hello"}] and data["stop_reason"] == "end_turn"
    )


def test_error_replies_in_both_dialects(server: ScriptedServer) -> None:
    server.add(
        error_reply(429, "slow down", {"retry-after": "2"}),
        error_reply(529, "Overloaded"),
        error_reply(400),
    )
    first = chat(server)
    assert first.status_code == 429 and first.headers["retry-after"] == "2"
    assert first.json()["error"]["message"] == "slow down"
    second = post(server, "/messages", {"stream": True})
    assert second.status_code == 529
    assert second.json() == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    third = chat(server)
    assert third.status_code == 400 and third.content == b""


def test_stream_error_event(server: ScriptedServer) -> None:
    server.add(stream_error_reply("boom", text=["a"]), stream_error_reply("Overloaded"))
    chunks = sse_data(chat(server).content)
    assert chunks[-1] == {"error": {"message": "boom", "type": "overloaded_error"}}
    body = post(server, "/messages", {"stream": True}).content
    assert sse_names(body)[-1] == "error"


def test_drop_reply_cuts_the_connection(server: ScriptedServer) -> None:
    server.add(drop_reply(after_chunks=2))
    received = b""
    url = server.base_url + "/chat/completions"
    with (
        pytest.raises(httpx.RemoteProtocolError),
        httpx.stream("POST", url, json={"stream": True}) as response,
    ):
        for chunk in response.iter_raw():
            received += chunk
    assert len(sse_data(received)) == 2


def test_unscripted_request_gets_a_clear_500(server: ScriptedServer) -> None:
    response = chat(server)
    assert response.status_code == 500
    message = response.json()["error"]["message"]
    assert "script ran out" in message and "server.add()" in message


def test_requests_are_recorded(server: ScriptedServer) -> None:
    server.add(text_reply("a"))
    post(
        server,
        "/chat/completions",
        {"model": "m", "stream": True},
        headers={"Authorization": "Bearer k", "X-Custom": "v"},
    )
    httpx.get(server.base_url + "/models")
    requests = server.requests
    assert [(r.method, r.path) for r in requests] == [
        ("POST", "/v1/chat/completions"),
        ("GET", "/v1/models"),
    ]
    assert requests[0].headers["authorization"] == "Bearer k"
    assert requests[0].headers["x-custom"] == "v"
    assert requests[0].body == {"model": "m", "stream": True}
    assert server.pending == 0
    assert len(server.wait_for_requests(2, timeout=1)) == 2
    with pytest.raises(TimeoutError):
        server.wait_for_requests(3, timeout=0.05)


def test_keep_alive_serves_several_requests_on_one_connection(server: ScriptedServer) -> None:
    server.add(text_reply("a"), text_reply("b"), text_reply("c"))
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    sockets = []
    for _ in range(3):
        connection.request(
            "POST",
            "/v1/chat/completions",
            body=json.dumps({"stream": True}),
            headers={"content-type": "application/json"},
        )
        response = connection.getresponse()
        assert response.status == 200
        assert sse_data(response.read())[-1] == "[DONE]"
        sockets.append(connection.sock)
    connection.close()
    assert sockets[0] is sockets[1] is sockets[2]


def test_concurrent_slow_streams_run_in_parallel(server: ScriptedServer) -> None:
    for _ in range(4):
        server.add(text_reply("a", "b", "c", delay=0.15))
    results: list[int] = []

    def fetch() -> None:
        results.append(len(sse_data(chat(server).content)))

    started = time.monotonic()
    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    assert results == [6, 6, 6, 6]
    assert 0.45 <= elapsed < 1.5  # each stream takes ~0.6 s; serial would be ~2.4 s


def test_close_delimited_framing() -> None:
    with ScriptedServer(framing="close") as server:
        server.add(text_reply("a"))
        response = chat(server)
    assert "transfer-encoding" not in response.headers
    assert response.headers["connection"] == "close"
    assert sse_data(response.content)[-1] == "[DONE]"


def test_raw_reply(server: ScriptedServer) -> None:
    server.add(raw_reply("data: odd\r\n\r\n", headers={"x-raw": "1"}))
    response = chat(server)
    assert response.content == b"data: odd\r\n\r\n" and response.headers["x-raw"] == "1"


def test_deltas_reply_is_fast(server: ScriptedServer) -> None:
    count = 100_000
    server.add(deltas_reply(count, text="x", usage=usage(input=1, output=count)))
    started = time.perf_counter()
    body = chat(server).content
    elapsed = time.perf_counter() - started
    contents = body.count(b'"content":"x"')
    assert contents == count
    assert body.endswith(b"data: [DONE]\n\n")
    assert count / elapsed > 100_000, f"{count / elapsed:.0f} deltas/s"
