"""The interactive file watcher: a real change under a watched folder calls back once per
debounced batch; files that do not matter (sessions, logs, caches, bytecode) do not; and with
settings ``autoReload`` the running UI reloads by itself (real tmux).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from knightcode._modes.interactive.watcher import _outermost, is_resource_change, watch_resources
from knightcode.testing import text_reply
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, launch, requires_tmux, scripted  # noqa: F401


def test_what_counts_as_a_change() -> None:
    for path in (
        "/a/skills/pdf/SKILL.md",
        "/a/prompts/review.md",
        "/a/mcp.json",
        "/p/.knightcode/settings.json",
        "/a/extensions/x.py",
    ):
        assert is_resource_change(path), path
    for path in (
        "/a/sessions/x/1.jsonl",
        "/a/mcp/logs/calc.log",
        "/a/mcp/tools-cache.json",
        "/a/extensions/__pycache__/x.cpython-311.pyc",
        "/a/extensions/__pycache__/notes.md",
    ):
        assert not is_resource_change(path), path


def test_nested_paths_are_watched_once(tmp_path: Path) -> None:
    (tmp_path / "agent" / "skills").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    paths = [
        tmp_path / "agent" / "skills",
        tmp_path / "agent",
        tmp_path / "other",
        tmp_path / "agent",
    ]
    assert _outermost(paths) == [(tmp_path / "agent").resolve(), (tmp_path / "other").resolve()]


async def test_a_change_calls_back_once_per_batch(tmp_path: Path) -> None:
    skills = tmp_path / "agent" / "skills"
    (skills / "pdf").mkdir(parents=True)
    (tmp_path / "agent" / "sessions").mkdir()
    batches: list[set[str]] = []
    stop = asyncio.Event()
    got = asyncio.Event()

    async def on_change(changed: set[str]) -> None:
        batches.append(changed)
        got.set()

    task = asyncio.create_task(
        watch_resources(lambda: [tmp_path / "agent"], on_change, stop, debounce_ms=200)
    )
    await asyncio.sleep(0.5)  # the watch is set up
    # Sessions and logs are written all the time: no reload for them.
    (tmp_path / "agent" / "sessions" / "s.jsonl").write_text("{}\n")
    await asyncio.sleep(1.0)
    assert batches == []
    # An editor saving a skill several times in a row: one batch.
    for text in ("---\nname: pdf\n", "---\nname: pdf\ndescription: PDFs\n---\n"):
        (skills / "pdf" / "SKILL.md").write_text(text)
    (tmp_path / "agent" / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    await asyncio.wait_for(got.wait(), 10)
    await asyncio.sleep(0.5)
    stop.set()
    await asyncio.wait_for(task, 10)
    assert len(batches) == 1
    assert {Path(p).name for p in batches[0]} == {"SKILL.md", "mcp.json"}


@requires_tmux
def test_auto_reload_picks_up_a_new_template(scripted: Scripted, launch: Launch) -> None:  # noqa: F811
    settings = scripted.agent_dir / "settings.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    settings.write_text(json.dumps({**data, "autoReload": True}))
    scripted.server.add(text_reply("shipped it"))
    prompts = scripted.agent_dir / "prompts"
    prompts.mkdir(exist_ok=True)
    (prompts / "review.md").write_text("Review $1\n")
    ui = launch()
    ui.wait_for("Prompts: /review")
    time.sleep(0.5)  # the watch is set up just after the UI opens
    (prompts / "ship.md").write_text("Ship $1 now\n")
    ui.wait_for("Reloaded plugins", timeout=20)
    ui.send_text("/ship release-3")
    ui.send_keys("Enter")
    ui.wait_for("shipped it")
    body = scripted.server.requests[0].body
    assert isinstance(body, dict)
    assert "Ship release-3 now" in json.dumps(body["messages"][-1])
