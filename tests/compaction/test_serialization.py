"""``serialize_conversation``: the reference's ``compaction-serialization.test.ts`` transcribed,
plus the documented format (labels, tool-call arguments as JSON, thinking left out)."""

from __future__ import annotations

import knightcode
from knightcode import convert_to_llm, serialize_conversation
from knightcode._session.serialization import truncate_for_summary

from .entries import assistant, bash, tool_result, user


def test_truncates_long_tool_results() -> None:
    result = serialize_conversation([tool_result("x" * 5000)])
    assert "[Tool result]:" in result
    assert "[... 3000 more characters truncated]" in result
    assert "x" * 3000 not in result
    assert "x" * 2000 in result


def test_does_not_truncate_short_tool_results() -> None:
    short = "x" * 1500
    result = serialize_conversation([tool_result(short)])
    assert result == f"[Tool result]: {short}"
    assert "truncated" not in result


def test_does_not_truncate_assistant_or_user_messages() -> None:
    long_text = "y" * 5000
    message = user(long_text)
    message["content"] = [{"type": "text", "text": long_text}]
    result = serialize_conversation([message, assistant(long_text)])
    assert "truncated" not in result
    assert long_text in result


def test_documented_format_with_tool_calls_and_without_thinking() -> None:
    messages = [
        user("What is in foo.ts?"),
        assistant(
            "Let me look.",
            thinking="secret reasoning that stays out",
            calls=[
                ("read", {"path": "foo.ts"}),
                ("edit", {"path": "bar.ts", "edits": [{"oldText": "é", "n": 1}]}),
            ],
        ),
        tool_result("contents of foo"),
        assistant("Done."),
    ]
    assert serialize_conversation(messages) == (
        "[User]: What is in foo.ts?\n\n"
        "[Assistant]: Let me look.\n\n"
        '[Assistant tool calls]: read(path="foo.ts"); '
        'edit(path="bar.ts", edits=[{"oldText":"é","n":1}])\n\n'
        "[Tool result]: contents of foo\n\n"
        "[Assistant]: Done."
    )


def test_text_blocks_join_and_empty_messages_vanish() -> None:
    message = user("")
    message["content"] = [
        {"type": "text", "text": "a"},
        {"type": "image", "data": "", "mimeType": "image/png"},
        {"type": "text", "text": "b"},
    ]
    answer = assistant("one")
    answer["content"].append({"type": "text", "text": "two"})
    assert serialize_conversation(
        [message, user(""), answer, assistant("", thinking="only thinking")]
    ) == ("[User]: ab\n\n[Assistant]: one\ntwo")


def test_agent_roles_are_serialized_as_the_user_text_the_model_saw() -> None:
    text = serialize_conversation(convert_to_llm([bash("ls", "a.txt")]))  # type: ignore[list-item]
    assert text == "[User]: Ran `ls`\n```\na.txt\n```"


def test_truncation_counts_javascript_characters_and_keeps_pairs_whole() -> None:
    text = "a" + "🚀" * 1500  # 3001 UTF-16 units
    cut = truncate_for_summary(text)
    assert cut.startswith("a" + "🚀" * 999)  # 1 + 1998 units; the 2000th would split a pair
    assert cut.endswith("[... 1002 more characters truncated]")
    cut.encode("utf-8")  # no lone surrogate


def test_exported_from_the_public_api() -> None:
    assert knightcode.serialize_conversation is serialize_conversation
    assert (
        "convert_to_llm" in knightcode.__all__
        and "generate_summary_with_usage" in knightcode.__all__
    )
