"""In-process scenario harness: a real :class:`AgentSession` talking to a :class:`ScriptedServer`.

Everything is the production code path — the model registry reads a ``models.json`` pointing the
``scripted`` provider at the server, the OpenAI client streams over loopback HTTP, tools run
through a :class:`ToolCallContext` on a :class:`LocalBackend`, plugins are real objects added to a
:class:`PluginHost` — only the command line is skipped, so tests can reach into the session while
it runs (steer, abort, switch models) and observe every in-process event.

Use the ``scenario`` fixture (import ``scenario_fixture`` and ``server_fixture`` into the test
module)::

    async def test_something(scenario: Builder) -> None:
        s = scenario(tools=[make_tool("echo", execute)], plugins=[MyPlugin()])
        s.server.add(text_reply("hi"))
        await s.agent.prompt("hello")
        assert s.types()[-1] == "agent_settled"
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from knightcode._agent.queues import Mode
from knightcode._agent.retry import RetrySettings
from knightcode._agent.session import AgentSession, AgentSessionOptions
from knightcode._agent.tool_context import ToolCallContext
from knightcode._llm.registry import ModelRegistry
from knightcode._plugins.definitions import ToolDefinition
from knightcode._plugins.host import PluginFailure, PluginHost
from knightcode._session.manager import SessionManager
from knightcode._tools import LocalBackend, create_builtin_tools
from knightcode.testing import ScriptedRequest, ScriptedServer

from .conftest import types_of

PROVIDER = "scripted"
MODEL = "scripted-model"
OTHER_MODEL = "scripted-large"
CONTEXT_WINDOW = 32000
SYSTEM_PROMPT = "You are a scripted test agent."

Event = dict[str, Any]


def write_models(agent_dir: Path, base_url: str) -> None:
    """A models.json with two models of the ``scripted`` provider (like conftest's, plus one)."""
    models = [
        {"id": MODEL, "contextWindow": CONTEXT_WINDOW, "maxTokens": 4096},
        {
            "id": OTHER_MODEL,
            "contextWindow": 4 * CONTEXT_WINDOW,
            "maxTokens": 8192,
            "reasoning": True,
        },
    ]
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    PROVIDER: {"baseUrl": base_url, "api": "openai-completions", "models": models}
                }
            }
        )
    )


def make_tool(
    name: str,
    execute: Callable[..., Any],
    *,
    parameters: dict[str, Any] | None = None,
    execution_mode: str = "parallel",
    description: str = "",
) -> ToolDefinition:
    """A tool definition; ``execute(tool_call_id, args, ctx, on_update)`` may be async."""
    schema = (
        parameters
        if parameters is not None
        else {
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"],
        }
    )
    return ToolDefinition(
        name=name,
        description=description or f"the {name} test tool",
        parameters=schema,
        execute=execute,
        execution_mode=execution_mode,
    )  # type: ignore[arg-type]


def text_of(message: dict[str, Any]) -> str:
    """The text of a message (string content or its text blocks), for any role and wire shape."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def result_text(event_or_message: dict[str, Any]) -> str:
    """The text of a tool result (a ``tool_execution_end`` event or a ``toolResult`` message)."""
    if "result" in event_or_message:
        return text_of(event_or_message["result"])
    return text_of(event_or_message)


@dataclass
class Scenario:
    """One built agent and what it did."""

    agent: AgentSession
    server: ScriptedServer
    host: PluginHost
    project: Path
    agent_dir: Path
    events: list[Event] = field(default_factory=list)
    failures: list[PluginFailure] = field(default_factory=list)

    def types(self) -> list[str]:
        """Event types (``message_update:text_delta``, ``message_end:user`` …) in order."""
        return types_of(self.events)

    def of_type(self, kind: str) -> list[Event]:
        return [event for event in self.events if event["type"] == kind]

    def when(self, predicate: Callable[[Event], bool]) -> asyncio.Event:
        """An asyncio event that is set by the first session event matching ``predicate``."""
        flag = asyncio.Event()

        def listener(event: Event) -> None:
            if not flag.is_set() and predicate(event):
                flag.set()

        self.agent.subscribe(listener)
        return flag

    @property
    def requests(self) -> list[ScriptedRequest]:
        return [r for r in self.server.requests if r.method == "POST"]

    def sent(self, index: int) -> list[dict[str, Any]]:
        """The messages of the ``index``-th model request, system prompt included."""
        return list(self.requests[index].body["messages"])

    def sent_user_texts(self, index: int) -> list[str]:
        return [text_of(m) for m in self.sent(index) if m["role"] == "user"]

    def session_lines(self) -> list[dict[str, Any]]:
        """The session file, read back from disk (header first)."""
        path = self.agent.session.session_file
        assert path is not None, "the scenario was built without persist=True"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]

    def tool_results(self) -> list[Event]:
        """The ``toolResult`` messages, from their ``message_end`` events."""
        return [
            e["message"]
            for e in self.events
            if e["type"] == "message_end" and e["message"]["role"] == "toolResult"
        ]


class Builder:
    """Builds scenarios for one test and closes them at the end."""

    def __init__(self, server: ScriptedServer, agent_dir: Path, project: Path) -> None:
        self.server = server
        self.agent_dir = agent_dir
        self.project = project
        self._built: list[Scenario] = []
        write_models(agent_dir, server.base_url)

    def __call__(
        self,
        *,
        tools: Iterable[ToolDefinition] = (),
        builtin: bool | Iterable[str] = False,
        plugins: Iterable[Any] = (),
        persist: bool = False,
        retry: RetrySettings | None = None,
        steering_mode: Mode = "one-at-a-time",
        follow_up_mode: Mode = "one-at-a-time",
        model: str = MODEL,
        thinking_level: str = "off",
        system_prompt: str = SYSTEM_PROMPT,
        tool_timeout_ms: int | None = None,
    ) -> Scenario:
        """An agent with the given tools and plugins (each plugin named ``p0``, ``p1`` … in load
        order); ``builtin`` adds all built-in tools (True) or the named ones; ``persist`` writes a
        session file under the agent dir instead of keeping the session in memory; retries default
        to a 1 ms base delay."""
        registry = ModelRegistry(self.agent_dir)
        found = registry.find(PROVIDER, model)
        assert found is not None, registry.models
        host = PluginHost()
        failures: list[PluginFailure] = []
        host.on_failure(failures.append)
        for index, plugin in enumerate(plugins):
            record = host.add_plugin(plugin, getattr(plugin, "plugin_name", f"p{index}"))
            assert record.error is None, record.error
        active: dict[str, ToolDefinition] = {}
        if builtin:
            every = create_builtin_tools()
            names = list(every) if builtin is True else list(builtin)
            active.update({name: every[name] for name in names})
        active.update({tool.name: tool for tool in tools})
        if persist:
            session = SessionManager.create(self.project, self.agent_dir / "sessions")
        else:
            session = SessionManager.in_memory(self.project)
        backend = LocalBackend(self.project)
        agent_dir = self.agent_dir
        project = self.project

        def tool_context(call_id: str, signal: asyncio.Event) -> ToolCallContext:
            return ToolCallContext(
                cwd=project,
                backend=backend,
                signal=signal,
                shell_path=None,
                shell_command_prefix=None,
                agent_dir=agent_dir,
                tool_call_id=call_id,
                extension=host.context,
            )

        agent = AgentSession(
            AgentSessionOptions(
                cwd=self.project,
                agent_dir=self.agent_dir,
                session=session,
                models=registry,
                model=found,
                tools=active,
                system_prompt=system_prompt,
                host=host,
                tool_context=tool_context,
                thinking_level=thinking_level,
                retry=retry or RetrySettings(base_delay_ms=1),
                steering_mode=steering_mode,
                follow_up_mode=follow_up_mode,
                tool_timeout_ms=tool_timeout_ms,
            )
        )
        scenario = Scenario(
            agent, self.server, host, self.project, self.agent_dir, failures=failures
        )
        agent.subscribe(scenario.events.append)
        self._built.append(scenario)
        return scenario

    async def close(self) -> None:
        for scenario in self._built:
            if scenario.agent.is_streaming:
                scenario.agent.abort()
                await asyncio.wait_for(scenario.agent.wait_idle(), 10)
            scenario.agent.session.close()
            await scenario.agent.models.aclose()


@pytest.fixture(name="server")
def server_fixture() -> Iterator[ScriptedServer]:
    """A scripted model server for this test (two models listed)."""
    with ScriptedServer(models=(MODEL, OTHER_MODEL)) as scripted_server:
        yield scripted_server


@pytest.fixture(name="scenario")
async def scenario_fixture(
    server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> AsyncIterator[Builder]:
    """Builds in-process agents against ``server``; see :class:`Builder`."""
    builder = Builder(server, agent_dir, project_dir)
    try:
        yield builder
    finally:
        await builder.close()


async def bounded(awaitable: Any, seconds: float = 10.0) -> Any:
    """Await with a generous upper bound, so a broken implementation fails instead of hanging."""
    return await asyncio.wait_for(awaitable, seconds)
