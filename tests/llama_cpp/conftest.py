"""Fixtures for the llama.cpp plugin's tests: the plugin loaded by a real host, pointed at a
router. The routers themselves (``router``, ``autoload_router``, ``single_server``,
``systemone_router``) and the tiny models are in ``routers.py``, shared with other test packages.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from knightcode import HookContext, LocalBackend
from knightcode._agent.session import AgentSession, AgentSessionOptions
from knightcode._llm.registry import ModelRegistry
from knightcode._plugins.host import PluginHost
from knightcode._plugins.planning import HostOptions, create_plugin_host
from knightcode._session.manager import SessionManager

from .routers import KEY
from .scripted_ui import ScriptedUI
from .servers import LlamaServer

__all__ = ["KEY", "Harness", "ids", "statuses"]


@dataclass
class Harness:
    """The plugin loaded by a real host, a registry pointed at a router, a scripted UI."""

    host: PluginHost
    registry: ModelRegistry
    ui: ScriptedUI
    agent_dir: Path
    project: Path

    @property
    def ctx(self) -> HookContext:
        assert self.host.context is not None
        return self.host.context

    async def agent(self, reference: str) -> AgentSession:
        """A real agent session on ``reference`` (in memory), reachable as ``ctx.agent``."""
        model = await self.registry.resolve(reference)
        agent = AgentSession(
            AgentSessionOptions(
                cwd=self.project,
                agent_dir=self.agent_dir,
                session=SessionManager.in_memory(self.project),
                models=self.registry,
                model=model,
                tools={},
                system_prompt="",
                backend=LocalBackend(self.project),
                hooks=self.host.hooks,
                hook_context=self.ctx,
            )
        )
        self.ctx.bind_session(agent, LocalBackend(self.project))
        return agent

    async def llama(self, args: str = "") -> None:
        """Run ``/llama`` as the host registered it."""
        command = self.host.registrations.commands.get("llama")
        assert command is not None
        await command.handler(args, self.ctx)


@pytest.fixture
def make_harness(
    agent_dir: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Harness]:
    """``make_harness(url, key=None, ui=None)``: the plugin as knightcode loads it."""
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "builtin:llama.cpp")
    for name in ("LLAMA_BASE_URL", "LLAMA_API_KEY", "HF_TOKEN", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)

    def make(
        url: str | None, key: str | None = None, ui: ScriptedUI | None = None, **env: str
    ) -> Harness:
        if url is not None:
            monkeypatch.setenv("LLAMA_BASE_URL", url)
        if key is not None:
            monkeypatch.setenv("LLAMA_API_KEY", key)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        host = create_plugin_host(HostOptions(cwd=project_dir, agent_dir=agent_dir))
        definition = host.registrations.providers.get("llama.cpp")
        assert definition is not None, [r.error for r in host.records]
        registry = ModelRegistry(agent_dir, providers=[definition], environ=dict(os.environ))
        assert host.context is not None
        scripted_ui = ui or ScriptedUI()
        host.context.bind_ui(scripted_ui, has_ui=True)
        host.context.bind_models(registry)
        return Harness(host, registry, scripted_ui, agent_dir, project_dir)

    return make


def statuses(server: LlamaServer) -> dict[str, str]:
    """Model id -> status value, straight from the router."""
    return {model_id: status["value"] for model_id, status in server.statuses().items()}


def ids(models: Any) -> set[str]:
    return {model.id for model in models}
