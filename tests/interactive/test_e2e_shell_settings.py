"""Settings ``shellPath`` and ``shellCommandPrefix`` for the interactive ``!cmd`` (a real
terminal through tmux): the prefix's alias runs, and a missing shell is a notice, not a crash.
"""

from __future__ import annotations

import json
import re

from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux

pytestmark = requires_tmux


def _settings(scripted: Scripted, **values: object) -> None:
    (scripted.agent_dir / "settings.json").write_text(json.dumps(values))


def test_bang_command_uses_the_prefix(scripted: Scripted, launch: Launch) -> None:
    aliases = scripted.project.parent / "aliases.sh"
    aliases.write_text("alias greet='echo hello-from-alias'\n")
    _settings(scripted, shellCommandPrefix=f"shopt -s expand_aliases\nsource {aliases}")
    ui = launch()
    ui.send_text("!greet")
    ui.send_keys("Enter")
    ui.wait_for(re.compile(r"^[▌\s]*hello-from-alias", re.M))


def test_a_missing_shell_path_is_a_notice(scripted: Scripted, launch: Launch) -> None:
    _settings(scripted, shellPath="/no/such/shell")
    ui = launch()
    ui.send_text("!echo hi")
    ui.send_keys("Enter")
    ui.wait_for("Custom shell path not found: /no/such/shell")
    # The message alone: no "Error: … (traceback lines)" as an unexpected failure would show.
    assert "Error:" not in ui.capture() and ".py" not in ui.capture()
    ui.send_text("still here")
    ui.wait_for("still here")  # the UI carries on
