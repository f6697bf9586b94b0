"""In-process sessions built the way the command line builds them, for tests of the agent, its
plugin hooks and the built-in plugins.

Everything is the production path — :func:`make_plan` and :func:`create_plugin_host` discover
and load plugins (the built-ins from the installed entry points, unless a test leaves them out),
:func:`build_agent` reads ``models.json`` (the ``scripted`` providers point at a
:class:`ScriptedServer`), opens the session file, chooses the tools and binds the hook context —
so every hook gets the real ``ctx`` it gets in production. Only the command line itself is
skipped, so a test can reach into the session while it runs (steer, abort, switch models) and see
every in-process event.

Use the ``scenario`` fixture (no built-in plugins, in-memory session, no built-in tools) or the
``build`` fixture (every built-in plugin, a session file) — the same :class:`Builder`::

    async def test_something(scenario: Builder) -> None:
        s = await scenario(tools=[make_tool("echo", execute)], plugins=[MyPlugin()])
        s.server.add(text_reply("hi"))
        await s.agent.prompt("hello")
        assert s.types()[-1] == "agent_settled"
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from knightcode import (
    HookContext,
    PluginFailure,
    PluginHost,
    RetrySettings,
    ToolDefinition,
    hookimpl,
)
from knightcode._agent.session import AgentSession
from knightcode._cli.main_command import RunRequest
from knightcode._modes.setup import build_agent
from knightcode._plugins.planning import HostOptions, create_plugin_host, make_plan
from knightcode.testing import ScriptedRequest, ScriptedServer, text_reply, usage

PROVIDER = "scripted"
ANTHROPIC = "scripted-anthropic"

MODEL = "scripted-model"  # a 32 000-token window
OTHER_MODEL = "scripted-large"  # 128 000 tokens, reasoning
CONTEXT_WINDOW = 32000
SMALL = "small"  # a 10 000-token window: thresholds are easy to cross
LARGE = "large"  # a 100 000-token window
TINY = "tiny"  # a 3 000-token window that a summary request overflows
REASONING = "thinker"

MODELS: list[dict[str, Any]] = [
    {"id": MODEL, "contextWindow": CONTEXT_WINDOW, "maxTokens": 4096},
    {"id": OTHER_MODEL, "contextWindow": 4 * CONTEXT_WINDOW, "maxTokens": 8192, "reasoning": True},
    {"id": SMALL, "contextWindow": 10000, "maxTokens": 2048},
    {"id": LARGE, "contextWindow": 100000, "maxTokens": 8192},
    {"id": TINY, "contextWindow": 3000, "maxTokens": 1024},
    {"id": REASONING, "contextWindow": 10000, "maxTokens": 2048, "reasoning": True},
]

SYSTEM_PROMPT = "You are a scripted test agent."
SUMMARY = "## Goal\nShip it.\n\n## Progress\n### Done\n- [x] read the code"

Event = dict[str, Any]


def write_config(agent_dir: Path, base_url: str, settings: dict[str, Any] | None = None) -> None:
    """``models.json`` with the scripted providers, and ``settings.json`` (1 ms retries unless
    ``settings`` says otherwise)."""
    providers = {
        PROVIDER: {"baseUrl": base_url, "api": "openai-completions", "models": MODELS},
        ANTHROPIC: {
            "baseUrl": base_url,
            "api": "anthropic-messages",
            "apiKey": "test-key",
            "models": [{"id": SMALL, "contextWindow": 10000, "maxTokens": 2048}],
        },
    }
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    merged: dict[str, Any] = {"retry": {"baseDelayMs": 1}}
    for key, value in (settings or {}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    (agent_dir / "settings.json").write_text(json.dumps(merged))


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
        else {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}
    )
    return ToolDefinition(
        name=name,
        description=description or f"the {name} test tool",
        parameters=schema,
        execute=execute,
        execution_mode=execution_mode,  # type: ignore[arg-type]
    )


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


def types_of(records: list[dict[str, Any]]) -> list[str]:
    """Record types, with the nested event type for message_update
    (``message_update:text_delta``) and the role for message start/end."""
    out = []
    for record in records:
        kind = record["type"]
        if kind == "message_update":
            kind += ":" + record["assistantMessageEvent"]["type"]
        elif kind in ("message_start", "message_end"):
            kind += ":" + record["message"]["role"]
        out.append(kind)
    return out


def summary_reply(text: str = SUMMARY, input: int = 500, output: int = 50) -> Any:
    """A summarizer's answer, with a recognizable usage."""
    return text_reply(text, usage=usage(input=input, output=output))


async def bounded(awaitable: Any, seconds: float = 20.0) -> Any:
    """Await with an upper bound, so a broken implementation fails instead of hanging."""
    return await asyncio.wait_for(awaitable, seconds)


class _TestTools:
    """Registers a test's tools, the way any plugin does."""

    plugin_name = "test-tools"

    def __init__(self, tools: Iterable[ToolDefinition]) -> None:
        self._tools = list(tools)

    @hookimpl
    def register_tools(self, register: Callable[..., None]) -> None:
        for tool in self._tools:
            register(tool)


@dataclass
class Run:
    """One built session and what happened in it."""

    agent: AgentSession
    host: PluginHost
    server: ScriptedServer
    project: Path
    agent_dir: Path
    events: list[Event] = field(default_factory=list)
    failures: list[PluginFailure] = field(default_factory=list)

    @property
    def ctx(self) -> HookContext:
        """The hook context every handler receives."""
        assert self.host.context is not None
        return self.host.context

    def types(self) -> list[str]:
        """Event types (``message_update:text_delta``, ``message_end:user`` …) in order."""
        return types_of(self.events)

    def of_type(self, *kinds: str) -> list[Event]:
        """The events of the given types, in order."""
        return [event for event in self.events if event["type"] in kinds]

    def kinds(self, *only: str) -> list[str]:
        """Event types in order, restricted to ``only`` when given."""
        return [e["type"] for e in self.events if not only or e["type"] in only]

    def when(self, predicate: Callable[[Event], bool]) -> asyncio.Event:
        """An asyncio event that is set by the first session event matching ``predicate``."""
        flag = asyncio.Event()

        def listener(event: Any) -> None:
            if not flag.is_set() and predicate(event):
                flag.set()

        self.agent.subscribe(listener)
        return flag

    @property
    def requests(self) -> list[ScriptedRequest]:
        """The model requests the server received."""
        return [r for r in self.server.requests if r.method == "POST"]

    def sent(self, index: int) -> list[dict[str, Any]]:
        """The messages of the ``index``-th model request, system prompt included."""
        return list(self.requests[index].body["messages"])

    def sent_user_texts(self, index: int) -> list[str]:
        return [text_of(m) for m in self.sent(index) if m["role"] == "user"]

    def prompt_text(self, index: int) -> str:
        """The text of the last user message of request ``index`` (the summary prompt)."""
        return text_of(self.requests[index].body["messages"][-1])

    def is_summary_request(self, index: int) -> bool:
        return "<conversation>" in self.prompt_text(index)

    def entries(self, kind: str | None = None) -> list[Any]:
        """The session's entries (all branches, file order), optionally of one type."""
        return [e for e in self.agent.session.get_entries() if kind is None or e["type"] == kind]

    def session_lines(self) -> list[dict[str, Any]]:
        """The session file, read back from disk (header first)."""
        path = self.agent.session.session_file
        assert path is not None, "the session was built without a file (persist=False)"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]

    file_lines = session_lines

    def tool_results(self) -> list[Event]:
        """The ``toolResult`` messages, from their ``message_end`` events."""
        return [
            e["message"]
            for e in self.events
            if e["type"] == "message_end" and e["message"]["role"] == "toolResult"
        ]


class Builder:
    """Builds sessions for one test and closes them at the end.

    :param builtin_plugins: the built-in plugins to load (``("compaction",)``), None for all
    :param persist: the default of ``persist`` for each build
    """

    def __init__(
        self,
        server: ScriptedServer,
        agent_dir: Path,
        project: Path,
        *,
        builtin_plugins: tuple[str, ...] | None,
        persist: bool,
        system_prompt: str | None = None,
        model: str = MODEL,
        builtin_tools: bool | None = False,
    ) -> None:
        self.builtin_tools = builtin_tools
        self.server, self.agent_dir, self.project = server, agent_dir, project
        self.model = model
        self.builtin_plugins = builtin_plugins
        self.persist = persist
        self.system_prompt = system_prompt
        self._runs: list[Run] = []

    async def __call__(
        self,
        *,
        tools: Iterable[ToolDefinition] = (),
        builtin: bool | Iterable[str] | None = None,
        plugins: Iterable[Any] = (),
        extensions: tuple[Path, ...] = (),
        settings: dict[str, Any] | None = None,
        persist: bool | None = None,
        retry: RetrySettings | None = None,
        steering_mode: str | None = None,
        follow_up_mode: str | None = None,
        provider: str = PROVIDER,
        model: str | None = None,
        thinking_level: str | None = None,
        system_prompt: str | None = None,
        tool_timeout_ms: int | None = None,
        flags: dict[str, Any] | None = None,
        builtin_plugins: tuple[str, ...] | bool | None = True,
    ) -> Run:
        """A session with the given tools and plugins (each plugin named ``p0``, ``p1`` … in
        load order unless it has a ``plugin_name``); ``builtin`` adds all built-in tools (True)
        or the named ones; ``persist`` writes a session file under the agent dir instead of
        keeping the session in memory."""
        config = dict(settings or {})
        if retry is not None:
            config["retry"] = {
                "enabled": retry.enabled,
                "maxRetries": retry.max_retries,
                "baseDelayMs": retry.base_delay_ms,
                "maxAgentDelayMs": retry.max_delay_ms,
            }
        for key, value in (
            ("steeringMode", steering_mode),
            ("followUpMode", follow_up_mode),
            ("toolTimeoutMs", tool_timeout_ms),
        ):
            if value is not None:
                config[key] = value
        write_config(self.agent_dir, self.server.base_url, config)
        failures: list[PluginFailure] = []
        options = HostOptions(
            cwd=self.project, agent_dir=self.agent_dir, extension_paths=extensions
        )
        chosen = self.builtin_plugins if builtin_plugins is True else builtin_plugins
        plan = _make_plan(options, chosen)  # type: ignore[arg-type]
        host = create_plugin_host(options, plan, on_failure=failures.append)
        host.flag_values.update(flags or {})
        tool_list = list(tools)
        if tool_list:
            record = host.add_plugin(_TestTools(tool_list), _TestTools.plugin_name)
            assert record.error is None, record.error
        for index, plugin in enumerate(plugins):
            record = host.add_plugin(plugin, getattr(plugin, "plugin_name", f"p{index}"))
            assert record.error is None, record.error
        names: list[str] | None = [tool.name for tool in tool_list]
        builtin = self.builtin_tools if builtin is None else builtin
        if builtin is None:
            names = None  # what the command line gives: the default tools and every plugin tool
        elif builtin is True:
            from knightcode._tools import BUILTIN_TOOL_NAMES

            names = [*BUILTIN_TOOL_NAMES, *tool_list_names(tool_list)]
        elif builtin:
            names = [*builtin, *tool_list_names(tool_list)]
        keep = self.persist if persist is None else persist
        request = RunRequest(
            mode="json",
            messages=[],
            model=f"{provider}/{model or (self.model if provider == PROVIDER else SMALL)}",
            thinking=thinking_level,  # type: ignore[arg-type]
            tools=names,
            no_session=not keep,
            system_prompt=system_prompt if system_prompt is not None else self.system_prompt,
        )
        agent = await build_agent(request, host, plan)
        run = Run(agent, host, self.server, self.project, self.agent_dir, failures=failures)
        agent.subscribe(run.events.append)
        self._runs.append(run)
        return run

    async def close(self) -> None:
        for run in self._runs:
            if run.agent.is_streaming:
                run.agent.abort()
                await asyncio.wait_for(run.agent.wait_idle(), 10)
            if run.host.context is not None:
                await run.host.context.aclose()
            run.agent.session.close()
            await run.agent.model_registry.aclose()


def tool_list_names(tools: Iterable[ToolDefinition]) -> list[str]:
    return [tool.name for tool in tools]


def _make_plan(options: HostOptions, builtins: tuple[str, ...] | None) -> Any:
    """Plan with only ``builtins`` among the built-in plugins (None: all of them)."""
    if builtins is None:
        return make_plan(options)
    previous = os.environ.get("KNIGHTCODE_LOAD_PLUGINS")
    os.environ["KNIGHTCODE_LOAD_PLUGINS"] = ",".join(f"builtin:{name}" for name in builtins)
    try:
        return make_plan(options)
    finally:
        if previous is None:
            del os.environ["KNIGHTCODE_LOAD_PLUGINS"]
        else:
            os.environ["KNIGHTCODE_LOAD_PLUGINS"] = previous


@pytest.fixture(name="server")
def server_fixture() -> Iterator[ScriptedServer]:
    """A scripted model server for this test."""
    with ScriptedServer(models=tuple(model["id"] for model in MODELS)) as scripted_server:
        yield scripted_server


@pytest.fixture(name="scenario")
async def scenario_fixture(
    server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> AsyncIterator[Builder]:
    """Sessions without built-in plugins, kept in memory; see :class:`Builder`."""
    builder = Builder(
        server,
        agent_dir,
        project_dir,
        builtin_plugins=(),
        persist=False,
        system_prompt=SYSTEM_PROMPT,
    )
    try:
        yield builder
    finally:
        await builder.close()


@pytest.fixture(name="build")
async def build_fixture(
    server: ScriptedServer, agent_dir: Path, project_dir: Path
) -> AsyncIterator[Builder]:
    """Sessions with every built-in plugin and a session file; see :class:`Builder`."""
    builder = Builder(
        server,
        agent_dir,
        project_dir,
        builtin_plugins=None,
        persist=True,
        model=SMALL,
        builtin_tools=None,
    )
    try:
        yield builder
    finally:
        await builder.close()


Scenario = Run
"""The name the agent tests use for a built session."""
