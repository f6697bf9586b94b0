"""``web_search`` then ``web_fetch`` end to end: the real executable in ``--mode json`` against
the scripted model server, a fake Brave API and a loopback site; the exact records of the trip.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from knightcode.testing import text_reply, tool_call, tool_call_reply
from knightcode_builtins.web_tools.config import tools_json_path, write_tools_json
from knightcode_builtins.web_tools.extract import html_to_markdown
from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)
from tests.harness import types_of

from .pages.site import PAGES, Site, serve
from .test_search import KEY, FakeBrave
from .test_search_e2e import MARKDOWN

TURN = [
    "turn_start",
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
]


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave() as server:
        yield server


@pytest.fixture
def site() -> Iterator[Site]:
    with serve() as running:
        yield running


def test_search_then_fetch_round_trip(
    scripted: Scripted,  # noqa: F811
    brave: FakeBrave,
    site: Site,
) -> None:
    write_tools_json(
        tools_json_path(scripted.agent_dir),
        {
            "braveApiKey": KEY,
            "search": {"baseUrl": brave.base_url},
            "fetch": {"allowHosts": ["127.0.0.1"]},
        },
    )
    url = site.url("/docs/frob")
    scripted.server.add(
        tool_call_reply([tool_call("s1", "web_search", {"query": "knightcode", "count": 2})]),
        tool_call_reply([tool_call("f1", "web_fetch", {"url": url})]),
        text_reply("The frobnicator is configured in ~/.frob.toml."),
    )
    records, result = scripted.run_json("How is the frobnicator configured?")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert types_of(records) == [
        "session",
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        *TURN[1:],
        *TURN,
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
    starts = [r for r in records if r["type"] == "tool_execution_start"]
    assert starts == [
        {
            "type": "tool_execution_start",
            "toolCallId": "s1",
            "toolName": "web_search",
            "args": {"query": "knightcode", "count": 2},
        },
        {
            "type": "tool_execution_start",
            "toolCallId": "f1",
            "toolName": "web_fetch",
            "args": {"url": url},
        },
    ]
    search_end, fetch_end = [r for r in records if r["type"] == "tool_execution_end"]
    assert search_end["result"]["content"] == [{"type": "text", "text": MARKDOWN}]
    # The page as readable markdown: exactly the extraction of the page, after two header lines.
    html = (PAGES / "boilerplate.html").read_text(encoding="utf-8")
    page = f"URL: {url}\nContent-Type: text/html\n\n" + html_to_markdown(html, url)
    size = len(html.encode("utf-8"))
    assert fetch_end == {
        "type": "tool_execution_end",
        "toolCallId": "f1",
        "toolName": "web_fetch",
        "result": {
            "content": [{"type": "text", "text": page}],
            "details": {
                "url": url,
                "finalUrl": url,
                "status": 200,
                "contentType": "text/html",
                "bytes": size,
                "truncated": False,
                "redirects": [],
                "kind": "html",
                "chars": len(page) - len(f"URL: {url}\nContent-Type: text/html\n\n"),
            },
        },
        "isError": False,
        "durationMs": fetch_end["durationMs"],
    }
    assert "# Configuring the frobnicator" in page and "NAV-PRICING" not in page
    results = [
        r["message"]
        for r in records
        if r["type"] == "message_end" and r["message"]["role"] == "toolResult"
    ]
    assert [m["toolCallId"] for m in results] == ["s1", "f1"]
    assert results[1]["content"] == [{"type": "text", "text": page}]
    # The model saw the search results, then the page, as the answers to its calls.
    third = scripted.server.requests[2].body["messages"]
    assert [m["role"] for m in third] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert third[2]["tool_calls"][0]["function"]["name"] == "web_search"
    assert third[3] == {"role": "tool", "content": MARKDOWN, "tool_call_id": "s1"}
    assert third[4]["tool_calls"][0]["function"]["name"] == "web_fetch"
    assert third[5] == {"role": "tool", "content": page, "tool_call_id": "f1"}
    assert [path for path, _ in site.requests] == ["/docs/frob"]
