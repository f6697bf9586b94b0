"""Settings ``tools.outsideWorkspace``: ``write`` and ``edit`` outside the working directory are
allowed (the default), refused, or asked about — refused where nobody can answer — through the
real executable. Paths are judged resolved: ``..`` collapsed, symbolic links followed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted


def _configure(s: Scripted, mode: str | None) -> None:
    settings: dict[str, Any] = {"retry": {"baseDelayMs": 10}}
    if mode is not None:
        settings["tools"] = {"outsideWorkspace": mode}
    (s.agent_dir / "settings.json").write_text(json.dumps(settings))


def _run_tool(s: Scripted, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """One model turn calling ``name`` with ``args``, then a final answer; the tool's end event."""
    s.server.add(tool_call_reply([tool_call("c1", name, args)]), text_reply("finished"))
    records, result = s.run_json("-p", "go")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    (end,) = [r for r in records if r["type"] == "tool_execution_end"]
    return end


def _text(end: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in end["result"]["content"])


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the project: outside the working directory."""
    path = tmp_path / "outside"
    path.mkdir()
    return path


def test_by_default_a_write_outside_the_project_goes_ahead(
    scripted: Scripted, outside: Path
) -> None:
    _configure(scripted, None)
    end = _run_tool(scripted, "write", {"path": "../outside/new.txt", "content": "hello\n"})
    assert end["isError"] is False
    assert (outside / "new.txt").read_text() == "hello\n"


@pytest.mark.parametrize(
    "path",
    ["../outside/new.txt", "{outside}/new.txt", "sub/../../outside/new.txt"],
    ids=["relative", "absolute", "dotdot"],
)
def test_refuse_stops_a_write_outside_and_tells_the_model(
    scripted: Scripted, outside: Path, path: str
) -> None:
    _configure(scripted, "refuse")
    path = path.format(outside=outside)
    end = _run_tool(scripted, "write", {"path": path, "content": "hello\n"})
    assert end["isError"] is True
    message = _text(end)
    assert f"Refused to write {path}" in message
    assert str(scripted.project) in message
    assert 'settings tools.outsideWorkspace is "refuse"' in message
    assert not (outside / "new.txt").exists()
    # The model saw the refusal as the tool result.
    sent = json.dumps(scripted.server.requests[-1].body)
    assert "Refused to write" in sent


def test_refuse_follows_symbolic_links(scripted: Scripted, outside: Path) -> None:
    _configure(scripted, "refuse")
    (scripted.project / "linkdir").symlink_to(outside)
    (scripted.project / "dangling").symlink_to(outside / "created-through-link.txt")
    end = _run_tool(scripted, "write", {"path": "linkdir/new.txt", "content": "x"})
    assert end["isError"] is True
    assert f"linkdir/new.txt (resolves to {outside.resolve() / 'new.txt'})" in _text(end)
    assert not (outside / "new.txt").exists()
    end = _run_tool(scripted, "write", {"path": "dangling", "content": "x"})
    assert end["isError"] is True and "dangling (resolves to" in _text(end)
    assert not (outside / "created-through-link.txt").exists()


def test_refuse_still_allows_writes_inside(scripted: Scripted) -> None:
    _configure(scripted, "refuse")
    (scripted.project / "sub").mkdir()
    (scripted.project / "inner").symlink_to(scripted.project / "sub")  # a link that stays inside
    end = _run_tool(scripted, "write", {"path": "sub/../a.txt", "content": "a"})
    assert end["isError"] is False and (scripted.project / "a.txt").read_text() == "a"
    end = _run_tool(scripted, "write", {"path": "inner/b.txt", "content": "b"})
    assert end["isError"] is False and (scripted.project / "sub" / "b.txt").read_text() == "b"


def test_refuse_stops_an_edit_outside(scripted: Scripted, outside: Path) -> None:
    _configure(scripted, "refuse")
    target = outside / "config.txt"
    target.write_text("value = 1\n")
    edits = [{"oldText": "value = 1", "newText": "value = 2"}]
    end = _run_tool(scripted, "edit", {"path": str(target), "edits": edits})
    assert end["isError"] is True
    assert f"Refused to edit {target}" in _text(end) and "tools.outsideWorkspace" in _text(end)
    assert target.read_text() == "value = 1\n"


def test_ask_without_anyone_to_ask_refuses(scripted: Scripted, outside: Path) -> None:
    _configure(scripted, "ask")
    end = _run_tool(scripted, "write", {"path": "../outside/new.txt", "content": "x"})
    assert end["isError"] is True
    assert 'settings tools.outsideWorkspace is "ask" and nobody can be asked' in _text(end)
    assert not (outside / "new.txt").exists()


def test_an_invalid_value_is_a_settings_error(scripted: Scripted) -> None:
    _configure(scripted, "sometimes")
    result = scripted.run("-p", "go")
    assert result.returncode == 2
    assert "tools.outsideWorkspace" in result.stderr and "Traceback" not in result.stderr
