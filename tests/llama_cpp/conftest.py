"""Fixtures: tiny generated models and real llama-server routers, started once per session.

Routers (each on a free loopback port, stopped at the end of the session):

* ``router`` — the main one: ``--no-models-autoload``, API key :data:`KEY`, the three tiny
  models, a corrupt ``broken.gguf``, and two presets: ``tiny-small-ctx`` (``ctx-size 64``) and
  ``tiny-bad-lora`` (a missing LoRA file: the load fails although the model file is fine);
* ``autoload_router`` — autoload on, no key, models sleep after 1 s idle;
* ``single_server`` — a plain ``llama-server -m`` (not router mode);
* ``systemone_router`` — the current llama.cpp build, for ``/v1/systemone``.

Tests that change which models are loaded on a shared router start with ``router.ensure(...)``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
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

from .scripted_ui import ScriptedUI
from .servers import LlamaServer, fast_binary, systemone_binary

KEY = "sekret"
# Greedy sampling by default (knightcode sends no temperature), so the tiny models' replies are
# exact; one thread per model process leaves the second core to the tests.
DETERMINISTIC = ["--temp", "0", "-t", "1"]
PRESETS = """version = 1

[tiny-small-ctx]
model = {models}/tiny-chat.gguf
ctx-size = 64

[tiny-bad-lora]
model = {models}/tiny-chat.gguf
lora = {models}/no-such-lora.gguf
"""


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny models (see ``make_tiny_gguf.py``) and a corrupt file."""
    from .make_tiny_gguf import write_model

    out = tmp_path_factory.mktemp("llama-models")
    for variant in ("chat", "tools", "decision", "split"):
        write_model(str(out / f"tiny-{variant}.gguf"), variant)
    (out / "broken.gguf").write_bytes(b"this is not a GGUF file\n" * 64)
    return out


def _start(
    tmp: Path, name: str, binary: Path, args: list[str], key: str | None = None
) -> LlamaServer:
    return LlamaServer(binary, args, tmp / f"{name}.log", api_key=key).start()


@pytest.fixture(scope="session")
def router(models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    tmp = tmp_path_factory.mktemp("router")
    presets = tmp / "presets.ini"
    presets.write_text(PRESETS.format(models=models_dir))
    args = [
        "--models-dir",
        str(models_dir),
        "--models-preset",
        str(presets),
        "--no-models-autoload",
        "--api-key",
        KEY,
        *DETERMINISTIC,
    ]
    server = _start(tmp, "router", fast_binary(), args, KEY)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def autoload_router(
    models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LlamaServer]:
    tmp = tmp_path_factory.mktemp("autoload")
    args = ["--models-dir", str(models_dir), "--sleep-idle-seconds", "1", *DETERMINISTIC]
    server = _start(tmp, "autoload", fast_binary(), args)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def single_server(
    models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LlamaServer]:
    tmp = tmp_path_factory.mktemp("single")
    server = _start(
        tmp, "single", fast_binary(), ["-m", str(models_dir / "tiny-chat.gguf"), *DETERMINISTIC]
    )
    yield server
    server.stop()


@pytest.fixture(scope="session")
def systemone_router(
    models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LlamaServer]:
    binary = systemone_binary()
    if binary is None:
        message = "no llama-server with /v1/systemone (built by .ci/run; see docs/llama-cpp.md)"
        if os.environ.get("KNIGHTCODE_REQUIRE_SYSTEMONE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    tmp = tmp_path_factory.mktemp("systemone")
    args = [
        "--models-dir",
        str(models_dir),
        "--no-models-autoload",
        "--api-key",
        KEY,
        *DETERMINISTIC,
    ]
    server = _start(tmp, "systemone", binary, args, KEY)
    server.ensure({"tiny-decision", "tiny-chat"})
    yield server
    server.stop()


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
