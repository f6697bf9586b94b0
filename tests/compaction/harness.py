"""A real knightcode session with ``builtin:compaction``, against the scripted model server.

Everything is built the way the command line builds it — ``make_plan`` and ``create_plugin_host``
discover and load the built-in plugins from the installed entry points, ``build_agent`` creates
the model registry from ``models.json``, opens a session file and fills ``ctx`` — so the plugin
runs exactly as in production. Tests add observer plugins to the host and read the events the
session published and the requests the server received.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from knightcode._agent.session import AgentSession
from knightcode._cli.main_command import RunRequest
from knightcode._modes.setup import build_agent
from knightcode._plugins.host import PluginFailure, PluginHost
from knightcode._plugins.planning import HostOptions, create_plugin_host, make_plan
from knightcode.testing import ScriptedRequest, ScriptedServer, text_reply

PROVIDER = "scripted"
SMALL = "small"  # a 10 000-token window: thresholds are easy to cross
LARGE = "large"  # a 100 000-token window
TINY = "tiny"  # a 3 000-token window that a summary request overflows
REASONING = "thinker"
ANTHROPIC = "scripted-anthropic"

MODELS: list[dict[str, Any]] = [
    {"id": SMALL, "contextWindow": 10000, "maxTokens": 2048},
    {"id": LARGE, "contextWindow": 100000, "maxTokens": 8192},
    {"id": TINY, "contextWindow": 3000, "maxTokens": 1024},
    {"id": REASONING, "contextWindow": 10000, "maxTokens": 2048, "reasoning": True},
]

SUMMARY = "## Goal\nShip it.\n\n## Progress\n### Done\n- [x] read the code"

Event = dict[str, Any]


def write_config(agent_dir: Path, base_url: str, settings: dict[str, Any] | None = None) -> None:
    """models.json with the scripted providers, and settings.json (1 ms retries by default)."""
    providers = {
        PROVIDER: {"baseUrl": base_url, "api": "openai-completions", "models": MODELS},
        ANTHROPIC: {
            "baseUrl": base_url,
            "api": "anthropic-messages",
            "apiKey": "test-key",
            "models": [{"id": SMALL, "contextWindow": 10000, "maxTokens": 2048}],
        },
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    merged: dict[str, Any] = {"retry": {"baseDelayMs": 1}}
    merged.update(settings or {})
    (agent_dir / "settings.json").write_text(json.dumps(merged))


def summary_reply(text: str = SUMMARY, input: int = 500, output: int = 50) -> Any:
    """A summarizer's answer, with a recognizable usage."""
    from knightcode.testing import usage

    return text_reply(text, usage=usage(input=input, output=output))


@dataclass
class Run:
    """One built session and what happened in it."""

    agent: AgentSession
    host: PluginHost
    server: ScriptedServer
    events: list[Event] = field(default_factory=list)
    failures: list[PluginFailure] = field(default_factory=list)

    def of_type(self, *kinds: str) -> list[Event]:
        return [e for e in self.events if e["type"] in kinds]

    def kinds(self, *only: str) -> list[str]:
        """Event types in order, restricted to ``only`` when given."""
        return [e["type"] for e in self.events if not only or e["type"] in only]

    @property
    def requests(self) -> list[ScriptedRequest]:
        return [r for r in self.server.requests if r.method == "POST"]

    def prompt_text(self, index: int) -> str:
        """The text of the last user message of request ``index`` (the summary prompt)."""
        message = self.requests[index].body["messages"][-1]
        content = message["content"]
        return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)

    def is_summary_request(self, index: int) -> bool:
        return "<conversation>" in self.prompt_text(index)

    def entries(self, kind: str | None = None) -> list[Any]:
        """The session's entries (all branches, file order), optionally of one type."""
        return [e for e in self.agent.session.get_entries() if kind is None or e["type"] == kind]

    def file_lines(self) -> list[dict[str, Any]]:
        path = self.agent.session.session_file
        assert path is not None
        return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


class Builder:
    """Builds runs for one test, closing them at the end."""

    def __init__(self, server: ScriptedServer, agent_dir: Path, project: Path) -> None:
        self.server, self.agent_dir, self.project = server, agent_dir, project
        self._runs: list[Run] = []

    async def __call__(
        self,
        *,
        settings: dict[str, Any] | None = None,
        model: str = SMALL,
        provider: str = PROVIDER,
        plugins: tuple[Any, ...] = (),
        thinking: str | None = None,
        extensions: tuple[Path, ...] = (),
        flags: dict[str, Any] | None = None,
    ) -> Run:
        write_config(self.agent_dir, self.server.base_url, settings)
        failures: list[PluginFailure] = []
        options = HostOptions(
            cwd=self.project, agent_dir=self.agent_dir, extension_paths=extensions
        )
        plan = make_plan(options)
        host = create_plugin_host(options, plan, on_failure=failures.append)
        host.flag_values.update(flags or {})
        for index, plugin in enumerate(plugins):
            record = host.add_plugin(plugin, getattr(plugin, "plugin_name", f"test{index}"))
            assert record.error is None, record.error
        request = RunRequest(
            mode="json", messages=[], model=f"{provider}/{model}", thinking=thinking
        )
        agent = await build_agent(request, host, plan)
        run = Run(agent, host, self.server, failures=failures)
        agent.subscribe(run.events.append)
        self._runs.append(run)
        return run

    async def close(self) -> None:
        for run in self._runs:
            if run.agent.is_streaming:
                run.agent.abort()
                await asyncio.wait_for(run.agent.wait_idle(), 10)
            run.agent.session.close()
            await run.agent.models.aclose()


@pytest.fixture(name="server")
def server_fixture() -> Iterator[ScriptedServer]:
    with ScriptedServer(models=(SMALL, LARGE, TINY, REASONING)) as scripted:
        yield scripted


@pytest.fixture(name="build")
async def build_fixture(
    server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> AsyncIterator[Builder]:
    builder = Builder(server, agent_dir, project_dir)
    try:
        yield builder
    finally:
        await builder.close()


async def bounded(awaitable: Any, seconds: float = 20.0) -> Any:
    """Await with an upper bound, so a broken implementation fails instead of hanging."""
    return await asyncio.wait_for(awaitable, seconds)
