"""Large request bodies: encoded message by message and sent in chunks, byte for byte what one
``json.dumps`` of the whole body gives, through the real client and the scripted server.
"""

from __future__ import annotations

import json
import math
from typing import Any

from knightcode._llm.anthropic_messages import stream_anthropic_messages
from knightcode._llm.openai_completions import stream_openai_completions
from knightcode._llm.transport import encode_body, encode_body_chunks
from knightcode._llm.types import Context, StreamOptions
from knightcode.testing import ScriptedServer, text_reply

from .conftest import collect, make_model


def reference(body: dict[str, Any]) -> bytes:
    """What encode_body wrote as one json.dumps call."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "replace")


def long_history(count: int = 300) -> list[Any]:
    """A resumed session: ASCII and non-ASCII turns, control characters, a lone surrogate,
    floats, tool calls whose results come back, and assistants of another model.
    """
    messages: list[Any] = []
    for index in range(count):
        text = ["plain ascii", "é 日本 😀 \u2028", "tab\there \x01 nul\x00", "lone \ud800 end"][
            index % 4
        ]
        messages.append({"role": "user", "content": f"{index}: {text}", "timestamp": index})
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"think {index} {text}"},
                    {"type": "text", "text": f"answer {index}"},
                    {
                        "type": "toolCall",
                        "id": f"call_{index}",
                        "name": "read",
                        "arguments": {"path": f"f{index}.py", "ratio": index / 3, "one": 1.0},
                    },
                ],
                "api": "openai-completions",
                "provider": "elsewhere",
                "model": "other-model",
                "usage": {
                    "input": 1,
                    "output": 1,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 2,
                },
                "stopReason": "toolUse",
                "timestamp": index,
            }
        )
        messages.append(
            {
                "role": "toolResult",
                "toolCallId": f"call_{index}",
                "toolName": "read",
                "content": [{"type": "text", "text": f"result {index} {text}"}],
                "isError": False,
                "timestamp": index,
            }
        )
    return messages


def test_chunks_are_one_json_dumps_of_the_body() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "user", "content": text, "n": number}
            for text in ("a", "é😀", "\x01", "x\ud800y", '"\\/')
            for number in (1, 1.0, 3e-06, math.nan, 1e300, -0.0)
        ]
        * 5,
        "stream": True,
        "tools": [{"name": "t", "parameters": {"type": "object"}}],
    }
    chunks = encode_body_chunks(body)
    assert len(chunks) == 1 or all(chunks)
    assert b"".join(chunks) == encode_body(body) == reference(body)
    kept = json.loads(json.dumps(body))  # NaN survives the round trip in Python
    released = encode_body_chunks(body, release=True)
    assert b"".join(released) == reference(kept)
    assert body["messages"] == []  # released as encoded: nobody else held this body


async def test_a_long_history_reaches_the_server_as_one_dumps(server: ScriptedServer) -> None:
    context = Context(system_prompt="sys", messages=long_history(1500))
    seen: list[dict[str, Any]] = []

    async def keep(payload: dict[str, Any]) -> None:
        seen.append(json.loads(json.dumps(payload)))  # a hook sees (and may keep) dicts

    for stream, api in (
        (stream_openai_completions, "openai-completions"),
        (stream_anthropic_messages, "anthropic-messages"),
    ):
        seen.clear()
        for options in (StreamOptions(api_key="k"), StreamOptions(api_key="k", on_payload=keep)):
            server.add(text_reply("ok"))
            events = await collect(stream(make_model(server, api=api), context, options))
            assert events[-1]["type"] == "done"
        chunked, hooked = server.requests[-2:]
        assert len(chunked.raw) > 2 * 256 * 1024  # several chunks, sent as they are
        assert int(chunked.headers["content-length"]) == len(chunked.raw)
        assert "transfer-encoding" not in chunked.headers
        assert chunked.raw == hooked.raw == reference(seen[0])
        assert len(seen[0]["messages"]) >= 4500
