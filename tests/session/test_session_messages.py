"""Conversion to provider messages, rendered exactly like the reference."""

from __future__ import annotations

from typing import Any

import pytest

from knightcode._session import convert_to_llm
from knightcode._session.messages import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    bash_execution_to_text,
)


def bash(**fields: Any) -> dict[str, Any]:
    base = {
        "role": "bashExecution",
        "command": "ls -a",
        "output": "a\nb",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 7,
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({}, "Ran `ls -a`\n```\na\nb\n```"),
        ({"output": ""}, "Ran `ls -a`\n(no output)"),
        ({"exitCode": 2}, "Ran `ls -a`\n```\na\nb\n```\n\nCommand exited with code 2"),
        ({"exitCode": None}, "Ran `ls -a`\n```\na\nb\n```"),
        (
            {"cancelled": True, "exitCode": 130},
            "Ran `ls -a`\n```\na\nb\n```\n\n(command cancelled)",
        ),
        (
            {"truncated": True, "fullOutputPath": "/tmp/x.log"},
            "Ran `ls -a`\n```\na\nb\n```\n\n[Output truncated. Full output: /tmp/x.log]",
        ),
        ({"truncated": True}, "Ran `ls -a`\n```\na\nb\n```"),
    ],
)
def test_bash_execution_rendering(fields: dict[str, Any], text: str) -> None:
    assert bash_execution_to_text(bash(**fields)) == text  # type: ignore[arg-type]


def test_summary_prefixes_are_the_reference_texts() -> None:
    assert COMPACTION_SUMMARY_PREFIX == (
        "The conversation history before this point was compacted into the following summary:"
        "\n\n<summary>\n"
    )
    assert BRANCH_SUMMARY_PREFIX == (
        "The following is a summary of a branch that this conversation came back from:"
        "\n\n<summary>\n"
    )


def test_convert_to_llm() -> None:
    user = {"role": "user", "content": "hi", "timestamp": 1}
    assistant = {
        "role": "assistant",
        "content": [],
        "api": "a",
        "provider": "p",
        "model": "m",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
    }
    tool = {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": "t",
        "content": [],
        "isError": False,
        "timestamp": 3,
    }
    image = {"type": "image", "data": "AA", "mimeType": "image/png"}
    messages: list[Any] = [
        user,
        assistant,
        tool,
        bash(),
        bash(excludeFromContext=True),  # the !! prefix: not for the model
        {"role": "custom", "customType": "x", "content": "plain", "display": False, "timestamp": 8},
        {"role": "custom", "customType": "x", "content": [image], "display": True, "timestamp": 9},
        {"role": "branchSummary", "summary": "B", "fromId": "f", "timestamp": 10},
        {"role": "compactionSummary", "summary": "C", "tokensBefore": 5, "timestamp": 11},
        {"role": "future", "timestamp": 12},
    ]
    out = convert_to_llm(messages)
    assert out[0] is user and out[1] is assistant and out[2] is tool  # passed through untouched
    assert out[3:] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Ran `ls -a`\n```\na\nb\n```"}],
            "timestamp": 7,
        },
        {"role": "user", "content": [{"type": "text", "text": "plain"}], "timestamp": 8},
        {"role": "user", "content": [image], "timestamp": 9},
        {
            "role": "user",
            "content": [{"type": "text", "text": BRANCH_SUMMARY_PREFIX + "B</summary>"}],
            "timestamp": 10,
        },
        {
            "role": "user",
            "content": [{"type": "text", "text": COMPACTION_SUMMARY_PREFIX + "C\n</summary>"}],
            "timestamp": 11,
        },
    ]
