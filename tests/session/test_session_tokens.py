"""Token estimates with the reference's numbers: chars are UTF-16 code units, ceil(chars / 4)."""

from __future__ import annotations

from typing import Any

import pytest

from knightcode._session import (
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    jsonl,
)
from knightcode._session.tokens import estimate_text_tokens, get_last_assistant_usage, utf16_len

IMAGE = {"type": "image", "data": "AAAA", "mimeType": "image/png"}


def assistant(
    content: list[Any], usage: dict[str, Any] | None = None, stop: str = "stop"
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "a",
        "provider": "p",
        "model": "m",
        "usage": usage or {},
        "stopReason": stop,
        "timestamp": 0,
    }


def test_utf16_length_counts_astral_characters_twice() -> None:
    assert utf16_len("abc") == 3
    assert utf16_len("é日") == 2
    assert utf16_len("😀") == 2
    assert utf16_len("a𝄞b") == 4
    assert utf16_len("\ud800") == 1  # a lone surrogate is one unit, as in JavaScript


@pytest.mark.parametrize(
    ("message", "tokens"),
    [
        ({"role": "user", "content": "hello"}, 2),
        ({"role": "user", "content": "abc😀"}, 2),  # 5 units; len() would say 4 -> 1 token
        (
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "abcd"},
                    IMAGE,
                    {"type": "text", "text": "😀😀"},
                ],
            },
            2,
        ),
        ({"role": "user", "content": [{"type": "text", "text": ""}]}, 0),
        (
            {
                "role": "toolResult",
                "content": [{"type": "text", "text": "abc"}, IMAGE],
                "toolCallId": "c",
                "toolName": "t",
                "isError": False,
            },
            1201,
        ),
        ({"role": "custom", "content": "𝄞", "customType": "x", "display": True}, 1),
        ({"role": "custom", "content": [IMAGE, IMAGE], "customType": "x", "display": True}, 2400),
        (
            {
                "role": "bashExecution",
                "command": "ls",
                "output": "a😀",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
            },
            2,
        ),
        ({"role": "branchSummary", "summary": "12345678", "fromId": "x"}, 2),
        ({"role": "compactionSummary", "summary": "", "tokensBefore": 5}, 0),
        ({"role": "somethingElse", "content": "ignored"}, 0),
    ],
)
def test_estimate_tokens_per_role(message: dict[str, Any], tokens: int) -> None:
    assert estimate_tokens(message) == tokens


def test_assistant_counts_text_thinking_tool_name_and_compact_json_arguments() -> None:
    arguments = {"path": "é😀.py", "n": 1.0}
    # JSON.stringify: compact, raw Unicode, 1.0 written as 1.
    assert jsonl.dumps(arguments) == '{"path":"é😀.py","n":1}'
    message = assistant(
        [
            {"type": "text", "text": "hi"},
            {"type": "thinking", "thinking": "think"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": arguments},
        ]
    )
    # 2 + 5 + 4 + 23 = 34 units -> 9 tokens.
    assert estimate_tokens(message) == 9


def test_estimate_text_tokens() -> None:
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("a") == 1
    assert estimate_text_tokens("😀😀😀") == 2


def test_calculate_context_tokens_prefers_total() -> None:
    assert (
        calculate_context_tokens(
            {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 50}
        )
        == 50
    )
    assert (
        calculate_context_tokens(
            {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 0}
        )
        == 10
    )
    assert calculate_context_tokens({"input": 7, "output": 1}) == 8


def test_context_estimate_uses_last_valid_usage_plus_later_messages() -> None:
    messages = [
        {"role": "user", "content": "aaaa"},
        assistant([{"type": "text", "text": "x"}], {"totalTokens": 100}),
        {"role": "user", "content": "bbbbbbbb"},
        assistant([{"type": "text", "text": "cccc"}], {"totalTokens": 999}, stop="aborted"),
    ]
    estimate = estimate_context_tokens(messages)
    assert (
        estimate.tokens,
        estimate.usage_tokens,
        estimate.trailing_tokens,
        estimate.last_usage_index,
    ) == (103, 100, 3, 1)


def test_context_estimate_skips_error_usage_and_sums_without_any() -> None:
    messages = [
        {"role": "user", "content": "aaaa"},
        assistant([{"type": "text", "text": "bbbb"}], {"totalTokens": 500}, stop="error"),
        assistant([{"type": "text", "text": "cc"}], {}),  # no usable usage
    ]
    estimate = estimate_context_tokens(messages)
    assert (estimate.tokens, estimate.usage_tokens, estimate.last_usage_index) == (3, 0, None)


def test_get_last_assistant_usage_from_entries() -> None:
    good = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}
    entries = [
        {"type": "message", "message": assistant([], good)},
        {"type": "message", "message": assistant([], {"totalTokens": 9}, stop="aborted")},
        {"type": "custom", "customType": "x"},
    ]
    assert get_last_assistant_usage(entries) == good
    assert get_last_assistant_usage(entries[1:]) is None
