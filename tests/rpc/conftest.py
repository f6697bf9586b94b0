"""Fixtures for RPC tests: the real ``knightcode --mode rpc`` driven through
:class:`knightcode.rpc.Client` against the scripted model server.

"While streaming" is made deterministic with a gate: the model calls the bash tool with
``cat gate``, where ``gate`` is a FIFO in the project, so the run blocks inside the tool until
the test writes a line into the FIFO (:meth:`Rpc.release`). Tests wait on events, never on time.
"""

from __future__ import annotations

import asyncio
import json
import os
import textwrap
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from knightcode.rpc import Client
from knightcode.testing import ScriptedServer, tool_call, tool_call_reply

PROVIDER = "scripted"
MODEL = "scripted-model"
OTHER_MODEL = "scripted-large"
CONTEXT_WINDOW = 32000

Record = dict[str, Any]


def write_models(agent_dir: Path, base_url: str) -> None:
    models = [
        {"id": MODEL, "contextWindow": CONTEXT_WINDOW, "maxTokens": 4096},
        {
            "id": OTHER_MODEL,
            "contextWindow": 4 * CONTEXT_WINDOW,
            "maxTokens": 8192,
            "reasoning": True,
            "input": ["text", "image"],
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


def is_type(kind: str) -> Callable[[Record], bool]:
    return lambda record: record.get("type") == kind


@dataclass
class Rpc:
    """One test's server, project and running clients."""

    server: ScriptedServer
    agent_dir: Path
    project: Path
    clients: list[Client] = field(default_factory=list)

    def plugin(self, name: str, source: str) -> Path:
        """Write an extension file for ``-e``."""
        path = self.project.parent / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        return path

    async def start(
        self, *args: str, model: str = MODEL, builtins: str = "", **options: Any
    ) -> Client:
        """Start ``knightcode --mode rpc --model scripted/...``; ``builtins`` is the
        ``KNIGHTCODE_LOAD_PLUGINS`` allow-list (none by default, so these tests see only the
        kernel and their own ``-e`` plugins)."""
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["KNIGHTCODE_LOAD_PLUGINS"] = builtins
        client = Client(
            ["--model", f"{PROVIDER}/{model}", *args],
            env=env,
            cwd=self.project,
            timeout=30,
            **options,
        )
        self.clients.append(client)
        return await client.start()

    # --- the gate -----------------------------------------------------------------------------

    @property
    def gate_path(self) -> Path:
        path = self.project / "gate"
        if not path.exists():
            os.mkfifo(path)
        return path

    def gate_reply(self, call_id: str = "call_gate") -> Any:
        """A model reply that blocks the run in a bash tool call until :meth:`release`."""
        self.gate_path  # noqa: B018 - creates the FIFO
        return tool_call_reply([tool_call(call_id, "bash", {"command": "cat gate"})])

    async def release(self, text: str = "opened") -> None:
        """Let the gated tool call finish (its output is ``text``)."""

        def write() -> None:
            with open(self.gate_path, "w") as fifo:  # blocks until cat has opened the FIFO
                fifo.write(text + "\n")

        await asyncio.to_thread(write)

    # --- session files ----------------------------------------------------------------------------

    def session_lines(self, path: str | Path) -> list[Record]:
        """Every line of a session file, parsed (fails on a damaged line)."""
        raw = Path(path).read_bytes()
        assert raw.endswith(b"\n"), "the last line is incomplete"
        return [json.loads(line) for line in raw.split(b"\n") if line]


@pytest.fixture
async def rpc(agent_dir: Path, project_dir: Path) -> AsyncIterator[Rpc]:
    with ScriptedServer(models=(MODEL, OTHER_MODEL)) as server:
        write_models(agent_dir, server.base_url)
        (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
        harness = Rpc(server, agent_dir, project_dir)
        try:
            yield harness
        finally:
            for client in harness.clients:
                if client.process is not None and client.process.returncode is None:
                    await client.close(timeout=10)


def roles(messages: list[Record]) -> list[str]:
    return [message["role"] for message in messages]


def text_of(message: Record) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [] if isinstance(block, dict))
