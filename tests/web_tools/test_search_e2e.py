"""``web_search`` end to end: the real executable in ``--mode json`` against the scripted model
server and a fake Brave API, both on loopback; the exact records of the round trip."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from knightcode.testing import text_reply, tool_call, tool_call_reply
from knightcode_builtins.web_tools.config import tools_json_path, write_tools_json
from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)
from tests.harness import types_of

from .test_search import KEY, FakeBrave

MARKDOWN = (
    "Web results for 'knightcode':\n"
    "\n"
    "1. [Knightcode & agents](https://example.com/knightcode) — 2 days ago\n"
    "   https://example.com/knightcode\n"
    "   A plugin-first coding agent.\n"
    "2. [Second](https://example.org/two) — 2024-05-01T00:00:00\n"
    "   https://example.org/two"
)


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave() as server:
        yield server


def test_web_search_round_trip_records(scripted: Scripted, brave: FakeBrave) -> None:  # noqa: F811
    write_tools_json(
        tools_json_path(scripted.agent_dir),
        {"braveApiKey": KEY, "search": {"baseUrl": brave.base_url}},
    )
    scripted.server.add(
        tool_call_reply([tool_call("call_1", "web_search", {"query": "knightcode", "count": 2})]),
        text_reply("Found it."),
    )
    records, result = scripted.run_json("Search the web for knightcode")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert types_of(records) == [
        "session",
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_update:toolcall_start",
        "message_update:toolcall_delta",
        "message_update:toolcall_end",
        "message_end:assistant",
        "tool_execution_start",
        "tool_execution_end",
        "message_start:toolResult",
        "message_end:toolResult",
        "turn_end",
        "turn_start",
        "message_start:assistant",
        "message_update:text_start",
        "message_update:text_delta",
        "message_update:text_end",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    assert records[10] == {
        "type": "tool_execution_start",
        "toolCallId": "call_1",
        "toolName": "web_search",
        "args": {"query": "knightcode", "count": 2},
    }
    end = records[11]
    assert end["toolCallId"] == "call_1" and end["toolName"] == "web_search"
    assert end["isError"] is False
    assert end["result"] == {
        "content": [{"type": "text", "text": MARKDOWN}],
        "details": {
            "query": "knightcode",
            "results": [
                {
                    "title": "Knightcode & agents",
                    "url": "https://example.com/knightcode",
                    "age": "2 days ago",
                },
                {"title": "Second", "url": "https://example.org/two", "age": "2024-05-01T00:00:00"},
            ],
        },
    }
    tool_result = records[13]["message"]
    assert tool_result["role"] == "toolResult" and tool_result["toolName"] == "web_search"
    assert tool_result["content"] == [{"type": "text", "text": MARKDOWN}]
    # Brave was asked once, with the key; the model got the markdown back.
    (seen,) = brave.seen
    assert seen.token == KEY and seen.query["q"] == ["knightcode"] and seen.query["count"] == ["2"]
    second = scripted.server.requests[1].body["messages"]
    assert second[-1] == {"role": "tool", "content": MARKDOWN, "tool_call_id": "call_1"}
    # The tool was offered to the model.
    offered = [tool["function"]["name"] for tool in scripted.server.requests[0].body["tools"]]
    assert "web_search" in offered


def test_web_search_without_a_key_is_a_tool_error_saying_how(
    scripted: Scripted,  # noqa: F811
) -> None:
    scripted.server.add(
        tool_call_reply([tool_call("c1", "web_search", {"query": "x"})]), text_reply("ok")
    )
    records, result = scripted.run_json("search")
    assert result.returncode == 0, result.stderr
    (end,) = [r for r in records if r["type"] == "tool_execution_end"]
    assert end["isError"] is True
    text = end["result"]["content"][0]["text"]
    assert "knightcode tools set-key brave" in text and "BRAVE_API_KEY" in text
