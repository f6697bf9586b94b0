"""End-to-end fixtures: the real ``knightcode`` executable in a real tmux, against the scripted
model server (see ``tests/agent/conftest.py``)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from knightcode.testing import ScriptedServer, TmuxSession
from knightcode.testing.tmux import tmux_available
from tests.agent.conftest import MODEL, PROVIDER, Scripted, write_models_json

# .ci/run installs tmux and sets KNIGHTCODE_REQUIRE_TMUX=1: there a missing tmux fails the tests.
requires_tmux = pytest.mark.skipif(
    not tmux_available() and not os.environ.get("KNIGHTCODE_REQUIRE_TMUX"),
    reason="tmux is not installed",
)

#: What the footer shows once the UI is ready.
READY = f"{PROVIDER}/{MODEL}"

Launch = Callable[..., TmuxSession]


@pytest.fixture
def scripted(agent_dir: Path, project_dir: Path) -> Iterator[Scripted]:
    with ScriptedServer(models=(MODEL,)) as server:
        write_models_json(agent_dir, server.base_url)
        (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
        yield Scripted(server, agent_dir, project_dir)


def _wait_for_title(tmux: TmuxSession, prefix: str, timeout: float = 20.0) -> None:
    """Wait until the program set a window title starting with ``prefix``: the UI sets it once
    it is ready for keys (after start-up work that could otherwise hold typed keys back).
    """
    import time

    deadline = time.monotonic() + timeout
    while True:
        title = tmux.tmux("display-message", "-p", "-t", "main", "#{pane_title}")
        if title.startswith(prefix):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the window title is {title!r}, not {prefix!r}…")
        time.sleep(0.02)


@pytest.fixture
def launch(scripted: Scripted) -> Iterator[Launch]:
    """Start ``knightcode ARGS`` (with the scripted model) in tmux; waits for the ready footer."""
    sessions: list[TmuxSession] = []

    def start(
        *args: str,
        ready: str | None = READY,
        width: int = 100,
        height: int = 30,
        model: str | None = f"{PROVIDER}/{MODEL}",
        **env: str,
    ) -> TmuxSession:
        environment = scripted.env(**env)
        environment.pop("NO_COLOR", None)  # colours are part of what is tested
        chosen = ["--model", model] if model else []
        command = [sys.executable, "-m", "knightcode", *chosen, *args]
        tmux = TmuxSession.start(
            command, cwd=scripted.project, env=environment, width=width, height=height
        )
        sessions.append(tmux)
        if ready is not None:
            tmux.wait_for(ready, timeout=20)
            _wait_for_title(tmux, "knightcode · ")
        return tmux

    yield start
    for tmux in sessions:
        tmux.kill()
