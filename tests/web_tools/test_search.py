"""``web_search`` against a fake Brave Search API on loopback: results, 401, 429 and quota."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from knightcode import AbortSignal, ToolContext
from knightcode_builtins.web_tools.config import tools_json_path, write_tools_json
from knightcode_builtins.web_tools.search import WebSearchError, web_search_tool

KEY = "BSA-test-key-123"

RESULTS = {
    "type": "search",
    "query": {"original": "knightcode"},
    "web": {
        "type": "search",
        "results": [
            {
                "title": "Knightcode &amp; <strong>agents</strong>",
                "url": "https://example.com/knightcode",
                "description": "A <strong>plugin-first</strong> coding agent.",
                "age": "2 days ago",
            },
            {
                "title": "Second",
                "url": "https://example.org/two",
                "description": "",
                "page_age": "2024-05-01T00:00:00",
            },
        ],
    },
}


@dataclass
class Answer:
    """One scripted response."""

    status: int = 200
    body: object = field(default_factory=lambda: RESULTS)
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    """One request the fake API received."""

    path: str
    query: dict[str, list[str]]
    token: str | None
    user_agent: str | None
    at: float


class FakeBrave:
    """A loopback HTTP server answering ``/res/v1/web/search`` from a script of answers."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self.seen: list[Seen] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                fake.seen.append(
                    Seen(
                        parts.path,
                        parse_qs(parts.query),
                        self.headers.get("X-Subscription-Token"),
                        self.headers.get("User-Agent"),
                        time.monotonic(),
                    )
                )
                answer = fake.answers.pop(0) if fake.answers else Answer()
                data = json.dumps(answer.body).encode()
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/res/v1"

    def __enter__(self) -> FakeBrave:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def brave() -> Iterator[FakeBrave]:
    with FakeBrave() as server:
        yield server


def configure(agent_dir: Path, brave: FakeBrave, key: str | None = KEY, **search: object) -> None:
    data: dict[str, object] = {"search": {"baseUrl": brave.base_url, **search}}
    if key is not None:
        data["braveApiKey"] = key
    write_tools_json(tools_json_path(agent_dir), data)


async def search(agent_dir: Path, **args: object) -> str:
    ctx = ToolContext.local(Path.cwd(), agent_dir=agent_dir)
    result = await web_search_tool("call_1", args, ctx, None)
    (block,) = result["content"]
    assert block["type"] == "text"
    return block["text"]


async def test_results_as_markdown_with_the_parameters_sent(
    agent_dir: Path, brave: FakeBrave
) -> None:
    configure(agent_dir, brave)
    text = await search(
        agent_dir, query="knightcode", count=2, freshness="pw", country="DE", safesearch="strict"
    )
    assert text == (
        "Web results for 'knightcode':\n"
        "\n"
        "1. [Knightcode & agents](https://example.com/knightcode) — 2 days ago\n"
        "   https://example.com/knightcode\n"
        "   A plugin-first coding agent.\n"
        "2. [Second](https://example.org/two) — 2024-05-01T00:00:00\n"
        "   https://example.org/two"
    )
    (seen,) = brave.seen
    assert seen.path == "/res/v1/web/search"
    assert seen.token == KEY
    assert seen.user_agent is not None and seen.user_agent.startswith("knightcode/")
    assert seen.query == {
        "q": ["knightcode"],
        "count": ["2"],
        "freshness": ["pw"],
        "country": ["de"],
        "safesearch": ["strict"],
    }


async def test_defaults_come_from_tools_json(agent_dir: Path, brave: FakeBrave) -> None:
    configure(agent_dir, brave, count=7, country="fr", safeSearch="off")
    await search(agent_dir, query="x")
    assert brave.seen[0].query == {
        "q": ["x"],
        "count": ["7"],
        "country": ["fr"],
        "safesearch": ["off"],
    }


async def test_no_results(agent_dir: Path, brave: FakeBrave) -> None:
    configure(agent_dir, brave)
    brave.answers.append(Answer(body={"type": "search", "web": {"results": []}}))
    assert await search(agent_dir, query="nothing") == "No web results for 'nothing'."


async def test_key_from_the_environment_when_tools_json_has_none(
    agent_dir: Path, brave: FakeBrave, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(agent_dir, brave, key=None)
    monkeypatch.setenv("BRAVE_API_KEY", "env-key")
    await search(agent_dir, query="x")
    assert brave.seen[0].token == "env-key"


async def test_no_key_says_how_to_set_one(
    agent_dir: Path, brave: FakeBrave, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(agent_dir, brave, key=None)
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    with pytest.raises(WebSearchError) as caught:
        await search(agent_dir, query="x")
    assert "knightcode tools set-key brave" in str(caught.value)
    assert "BRAVE_API_KEY" in str(caught.value)
    assert brave.seen == []


async def test_401_names_the_key_source_not_the_key(agent_dir: Path, brave: FakeBrave) -> None:
    configure(agent_dir, brave)
    brave.answers.append(
        Answer(
            401,
            {
                "type": "ErrorResponse",
                "error": {"code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "bad token"},
            },
        )
    )
    with pytest.raises(WebSearchError) as caught:
        await search(agent_dir, query="x")
    message = str(caught.value)
    assert "refused the API key from" in message and "tools.json" in message
    assert "HTTP 401" in message and "bad token" in message
    assert KEY not in message
    assert len(brave.seen) == 1


async def test_429_is_retried_after_retry_after(agent_dir: Path, brave: FakeBrave) -> None:
    configure(agent_dir, brave)
    limited = {"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "detail": "slow down"}}
    brave.answers.extend(
        [Answer(429, limited, {"Retry-After": "0.3", "X-RateLimit-Remaining": "0, 1999"}), Answer()]
    )
    text = await search(agent_dir, query="knightcode")
    assert text.startswith("Web results for 'knightcode':")
    assert len(brave.seen) == 2
    assert brave.seen[1].at - brave.seen[0].at >= 0.3


async def test_429_retries_are_bounded(agent_dir: Path, brave: FakeBrave) -> None:
    configure(agent_dir, brave, maxRetries=2)
    limited = {"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "detail": "slow down"}}
    brave.answers.extend(Answer(429, limited, {"Retry-After": "0"}) for _ in range(5))
    with pytest.raises(WebSearchError) as caught:
        await search(agent_dir, query="x")
    assert "rate limit reached (HTTP 429) after 2 retries (slow down)" in str(caught.value)
    assert len(brave.seen) == 3


async def test_a_long_retry_after_is_reported_not_waited(agent_dir: Path, brave: FakeBrave) -> None:
    configure(agent_dir, brave, maxRetryWait=5)
    brave.answers.append(Answer(429, {}, {"Retry-After": "60"}))
    started = time.monotonic()
    with pytest.raises(WebSearchError) as caught:
        await search(agent_dir, query="x")
    assert time.monotonic() - started < 5
    assert "retry after 60 s" in str(caught.value)
    assert len(brave.seen) == 1


async def test_a_used_up_quota_is_reported_and_not_retried(
    agent_dir: Path, brave: FakeBrave
) -> None:
    configure(agent_dir, brave)
    brave.answers.append(
        Answer(
            429,
            {
                "type": "ErrorResponse",
                "error": {"code": "QUOTA_LIMITED", "detail": "monthly quota"},
            },
            {"Retry-After": "1", "X-RateLimit-Remaining": "1, 0"},
        )
    )
    with pytest.raises(WebSearchError) as caught:
        await search(agent_dir, query="x")
    assert "quota of this key is used up" in str(caught.value)
    assert len(brave.seen) == 1


async def test_abort_stops_the_wait_for_a_retry(agent_dir: Path, brave: FakeBrave) -> None:
    configure(agent_dir, brave)
    brave.answers.append(Answer(429, {}, {"Retry-After": "20"}))
    signal = AbortSignal()
    ctx = ToolContext.local(Path.cwd(), agent_dir=agent_dir, signal=signal)

    async def abort_soon() -> None:
        while not brave.seen:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        signal.abort()

    started = time.monotonic()
    aborter = asyncio.create_task(abort_soon())
    with pytest.raises(WebSearchError, match="aborted"):
        await web_search_tool("c", {"query": "x"}, ctx, None)
    await aborter
    assert time.monotonic() - started < 5


async def test_bad_arguments_are_refused_before_asking(agent_dir: Path, brave: FakeBrave) -> None:
    configure(agent_dir, brave)
    for args, why in [
        ({"query": " "}, "query"),
        ({"query": "x", "count": 50}, "count"),
        ({"query": "x", "freshness": "yesterday"}, "freshness"),
        ({"query": "x", "country": "germany"}, "country"),
        ({"query": "x", "safesearch": "maybe"}, "safesearch"),
    ]:
        with pytest.raises(WebSearchError, match=why):
            await search(agent_dir, **args)
    assert brave.seen == []


async def test_a_broken_tools_json_is_a_clear_tool_error(agent_dir: Path) -> None:
    tools_json_path(agent_dir).write_text('{"search": {"count": "many"}}')
    with pytest.raises(WebSearchError) as caught:
        await search(agent_dir, query="x")
    assert (
        str(caught.value) == f"{tools_json_path(agent_dir)}: search.count: must be a whole number"
    )


def test_registering_the_tools_imports_no_http_client() -> None:
    """The plugin's module is imported on every start: registering web_search must stay cheap."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from knightcode_builtins import web_tools\n"
        "found = []\n"
        "web_tools.register_tools(found.append)\n"
        "print([d.name for d in found][0], 'httpx' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["web_search", "False"]
