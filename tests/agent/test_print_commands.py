"""Plugin slash commands in print and JSON mode: ``-p "/name args"`` runs the command (it is not
sent to the model), a failing command is reported and the next message goes on.
"""

from __future__ import annotations

from pathlib import Path

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted

PLUGIN = """
from pathlib import Path
from knightcode import hookimpl


def note(args, ctx):
    Path(ctx.cwd, "noted.txt").write_text(args)


def broken(args, ctx):
    raise RuntimeError("the command broke")


@hookimpl
def register_commands(register):
    register(name="note", handler=note, description="write a note")
    register(name="broken", handler=broken, description="always fails")
"""


def plugin(tmp_path: Path) -> Path:
    path = tmp_path / "commands_plugin.py"
    path.write_text(PLUGIN)
    return path


def test_a_command_runs_instead_of_prompting(scripted: Scripted, tmp_path: Path) -> None:
    scripted.server.add(text_reply("after the note"))
    result = scripted.run("-e", str(plugin(tmp_path)), "-p", "/note hello there", "go on")
    assert result.returncode == 0, result.stderr
    assert (scripted.project / "noted.txt").read_text() == "hello there"
    assert result.stdout == "after the note\n"
    (request,) = scripted.server.requests  # only "go on" reached the model
    assert "/note" not in str(request.body)


def test_only_a_command_prints_nothing(scripted: Scripted, tmp_path: Path) -> None:
    result = scripted.run("-e", str(plugin(tmp_path)), "-p", "/note quiet")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert scripted.server.requests == []


def test_a_failing_command_is_reported_in_json(scripted: Scripted, tmp_path: Path) -> None:
    scripted.server.add(text_reply("still here"))
    records, result = scripted.run_json("-e", str(plugin(tmp_path)), "/broken", "next")
    assert result.returncode == 0, result.stderr
    (error,) = [r for r in records if r["type"] == "extension_error"]
    assert error["event"] == "command" and "the command broke" in error["error"]
    assert error["extensionPath"].endswith("commands_plugin.py")
    assert records[-1]["type"] == "agent_settled"  # "next" was prompted after it


def test_a_failing_command_is_a_line_on_stderr_in_text_mode(
    scripted: Scripted, tmp_path: Path
) -> None:
    result = scripted.run("-e", str(plugin(tmp_path)), "-p", "/broken")
    assert result.returncode == 0
    assert "/broken (" in result.stderr and "the command broke" in result.stderr
    assert "Traceback" not in result.stderr
