"""Preparing a conversation for the model it is sent to."""

from __future__ import annotations

from typing import Any

from knightcode._llm.transform import NO_RESULT_TEXT, prepare_messages
from knightcode._llm.types import Model

MODEL = Model(provider="p", id="m", name="m", api="openai-completions", base_url="http://x")


def assistant(*content: dict[str, Any], stop: str = "toolUse", provider: str = "p") -> Any:
    return {
        "role": "assistant",
        "content": list(content),
        "api": "openai-completions",
        "provider": provider,
        "model": "m",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": stop,
        "timestamp": 0,
    }


def call(call_id: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "read", "arguments": {}}


def result(call_id: str) -> Any:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [],
        "isError": False,
        "timestamp": 0,
    }


USER: Any = {"role": "user", "content": "go", "timestamp": 0}


def test_unanswered_tool_calls_get_an_error_result_before_the_next_user_message() -> None:
    messages = [USER, assistant(call("a"), call("b")), result("a"), USER]
    prepared = prepare_messages(messages, MODEL)
    assert [m["role"] for m in prepared] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "user",
    ]
    synthetic: Any = prepared[3]
    assert synthetic["toolCallId"] == "b" and synthetic["isError"] is True
    assert synthetic["content"] == [{"type": "text", "text": NO_RESULT_TEXT}]


def test_trailing_unanswered_calls_are_left_alone() -> None:
    messages = [USER, assistant(call("a"))]
    assert prepare_messages(messages, MODEL) == messages


def test_failed_and_aborted_turns_are_skipped() -> None:
    messages = [
        USER,
        assistant({"type": "text", "text": "half"}, stop="error"),
        assistant({"type": "text", "text": "cut"}, stop="aborted"),
        USER,
    ]
    assert prepare_messages(messages, MODEL) == [USER, USER]


def test_thinking_of_another_model_becomes_text_and_ids_are_normalised() -> None:
    other = assistant(
        {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
        {"type": "thinking", "thinking": "secret", "thinkingSignature": "x", "redacted": True},
        {"type": "thinking", "thinking": "  "},
        call("a|1"),
        provider="other",
    )
    messages = [USER, other, result("a|1")]
    prepared: Any = prepare_messages(messages, MODEL, lambda i: i.replace("|", "_"))
    assert prepared[1]["content"] == [
        {"type": "text", "text": "hmm"},
        {"type": "toolCall", "id": "a_1", "name": "read", "arguments": {}},
    ]
    assert prepared[2]["toolCallId"] == "a_1"
    assert other["content"][3]["id"] == "a|1"  # the input is not modified


def test_same_model_messages_pass_unchanged() -> None:
    mine = assistant(
        {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"}, stop="stop"
    )
    prepared = prepare_messages([USER, mine], MODEL)
    assert prepared[1] is mine
