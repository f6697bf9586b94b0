"""``/llama`` in the interactive UI against a real llama.cpp router started with autoload off:
the first model of a user who has nothing else (no API key, no models.json, nothing loaded).

The router and its tiny models are the session-wide ones of ``tests/llama_cpp/routers.py``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from knightcode.testing import TmuxSession
from tests.interactive.conftest import requires_tmux
from tests.llama_cpp.routers import KEY
from tests.llama_cpp.servers import LlamaServer

pytestmark = requires_tmux

MODEL = "tiny-chat"
# Matches the terminal's output stream between two characters of text: colours, cursor moves.
_ESCAPE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def _router_env(router: LlamaServer) -> dict[str, str]:
    """The environment with the router in ``LLAMA_BASE_URL``/``LLAMA_API_KEY`` and no other
    provider's key."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.endswith("_API_KEY") and not name.startswith("LLAMA_")
    }
    env.update(LLAMA_BASE_URL=router.url, LLAMA_API_KEY=KEY)
    return env


@pytest.fixture
def ui(router: LlamaServer, project_dir: Path, tmp_path: Path) -> Iterator[TmuxSession]:
    """``knightcode`` in tmux as the spec's user starts it: the router in ``LLAMA_BASE_URL``
    and ``LLAMA_API_KEY``, no other provider's key, every built-in plugin; nothing loaded.

    The tiny models have a 2048-token context: a short system prompt and no built-in tools keep
    the prompt inside it (the path through the router is the same).
    """
    router.ensure(set())
    env = _router_env(router)
    env.pop("NO_COLOR", None)
    command = [sys.executable, "-m", "knightcode", "--system-prompt", "You are terse."]
    command.append("--no-builtin-tools")
    with TmuxSession.start(command, cwd=project_dir, env=env, width=100, height=30) as tmux:
        # Everything the program writes, kept: a state shown only briefly (the load of a tiny
        # model takes a fraction of a second) is checked afterwards, not raced for on screen.
        tmux.tmux("pipe-pane", "-O", "-t", "main", f"cat >> {tmp_path / 'output.log'}")
        yield tmux
    router.ensure(set())  # the router is shared by the whole run: leave nothing loaded


def _written(log: Path) -> str:
    """What the program drew, as text (escape sequences removed)."""
    return _ESCAPE.sub("", log.read_text(encoding="utf-8", errors="replace"))


def _session_entries(agent_dir: Path) -> list[dict[str, object]]:
    (path,) = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_llama_loads_a_first_model_on_a_router_with_autoload_off_and_it_answers(
    router: LlamaServer, ui: TmuxSession, agent_dir: Path, tmp_path: Path
) -> None:
    # The UI opens although no model is usable yet (an unloaded model is not offered).
    ui.wait_for(re.compile(r"no model\s*$", re.M), timeout=20)
    ui.wait_for("/llama loads a local one")

    ui.send_text("/llama")
    ui.send_keys("Enter")
    ui.wait_for("autoload off")
    ui.wait_for(re.compile(rf"^\s*{MODEL} — unloaded$", re.M))
    order = list(router.statuses())  # the dialog lists the models in the router's order
    ui.send_keys(*["Down"] * order.index(MODEL))
    ui.wait_for(f"→ {MODEL} — unloaded")
    ui.send_keys("Enter")
    ui.wait_for(f"Loaded {MODEL} · context window 2048 tokens", timeout=30)
    # The load ran with its progress in the status line and a dialog offering to cancel it.
    drawn = _written(tmp_path / "output.log")
    assert f"Loading {MODEL}…" in drawn
    assert "→ Cancel" in drawn

    # The session had no model: it takes the one just loaded.
    ui.wait_for(f"Using llama.cpp/{MODEL}")
    ui.wait_for(re.compile(rf"/2k\s+llama\.cpp/{MODEL}\s*$", re.M))  # footer: its real window
    assert router.statuses()[MODEL]["value"] == "loaded"

    ui.send_text("hi")
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"^\s*Hello!\s*$", re.M), timeout=30)
    ui.send_keys("C-d")
    assert ui.wait_exit() == 0

    messages = [e["message"] for e in _session_entries(agent_dir) if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant"]  # type: ignore[index]
    reply = messages[1]
    assert isinstance(reply, dict)
    assert (reply["provider"], reply["model"], reply["stopReason"]) == ("llama.cpp", MODEL, "stop")
    assert reply["content"] == [{"type": "text", "text": "Hello!"}]
    assert reply["usage"]["output"] > 0  # counted by the router


def test_starting_on_a_model_that_is_not_loaded_then_llama_load_and_ask(
    router: LlamaServer, project_dir: Path
) -> None:
    """``--model llama.cpp/<id>`` on a router with autoload off and nothing loaded: the UI
    starts on that model, ``/llama load <id>`` (no dialog) loads it, and the prompt is answered.
    """
    router.ensure(set())
    env = _router_env(router)
    command = [sys.executable, "-m", "knightcode", "--model", f"llama.cpp/{MODEL}"]
    command += ["--system-prompt", "You are terse.", "--no-builtin-tools", "--no-session"]
    try:
        with TmuxSession.start(command, cwd=project_dir, env=env, width=100, height=30) as ui:
            ui.wait_for(re.compile(rf"llama\.cpp/{MODEL}\s*$", re.M), timeout=20)  # footer
            ui.wait_for(f"{MODEL} is not loaded: type /llama load {MODEL}")
            ui.send_text(f"/llama load {MODEL}")
            ui.send_keys("Enter")
            ui.wait_for(f"Loaded {MODEL} · context window 2048 tokens", timeout=30)
            assert router.statuses()[MODEL]["value"] == "loaded"
            ui.send_text("hi")
            ui.send_keys("Enter")
            ui.wait_for(re.compile(r"^\s*Hello!\s*$", re.M), timeout=30)
            ui.send_keys("C-d")
            assert ui.wait_exit() == 0
    finally:
        router.ensure(set())  # the router is shared by the whole run: leave nothing loaded
