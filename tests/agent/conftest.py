"""Fixtures for agent tests: a scripted model server wired into the agent dir's models.json,
and helpers to run the real ``knightcode`` executable against it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from knightcode.testing import ScriptedServer

PROVIDER = "scripted"
MODEL = "scripted-model"


@dataclass
class Scripted:
    """The server plus the project and agent dir the runs use."""

    server: ScriptedServer
    agent_dir: Path
    project: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update(extra)
        return env

    def run(
        self, *args: str, stdin: str = "", timeout: float = 60, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """Run ``knightcode --model scripted/scripted-model ARGS`` in the project."""
        command = [sys.executable, "-m", "knightcode", "--model", f"{PROVIDER}/{MODEL}", *args]
        return subprocess.run(
            command,
            cwd=self.project,
            env=self.env(**env),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def run_without_model(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``knightcode ARGS`` in the project, the model left to settings and defaults."""
        return subprocess.run(
            [sys.executable, "-m", "knightcode", *args],
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def popen(self, *args: str, stderr: int = subprocess.PIPE) -> subprocess.Popen[bytes]:
        """Start ``knightcode --model scripted/scripted-model ARGS`` in the project, stdout piped
        (for tests that signal or kill it while it runs)."""
        command = [sys.executable, "-m", "knightcode", "--model", f"{PROVIDER}/{MODEL}", *args]
        return subprocess.Popen(
            command, cwd=self.project, env=self.env(), stdout=subprocess.PIPE, stderr=stderr
        )

    def run_json(
        self, *args: str, **env: str
    ) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[str]]:
        """Run in JSON mode; returns the parsed records (strict LF framing) and the process."""
        result = self.run("--mode", "json", *args, **env)
        records = [json.loads(line) for line in result.stdout.split("\n") if line]
        return records, result

    def session_files(self) -> list[Path]:
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"))

    def session_entries(self) -> list[dict[str, Any]]:
        (path,) = self.session_files()
        return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def write_models_json(agent_dir: Path, base_url: str, **model: Any) -> None:
    spec = {"id": MODEL, "contextWindow": 32000, "maxTokens": 4096, **model}
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    PROVIDER: {"baseUrl": base_url, "api": "openai-completions", "models": [spec]}
                }
            }
        )
    )


@pytest.fixture
def scripted(agent_dir: Path, project_dir: Path) -> Iterator[Scripted]:
    """A running scripted server and a models.json that points the ``scripted`` provider at it.

    Retry delays are shortened through settings so retry tests take milliseconds.
    """
    with ScriptedServer(models=(MODEL,)) as server:
        write_models_json(agent_dir, server.base_url)
        (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
        yield Scripted(server, agent_dir, project_dir)
