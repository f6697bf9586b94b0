"""``--models`` in the interactive UI (real tmux): the session starts on the scope's first model
and ``ctrl+p`` goes through the scope only, in the patterns' order.
"""

from __future__ import annotations

import json
import re

from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux

pytestmark = requires_tmux


def test_ctrl_p_cycles_through_the_models_scope(scripted: Scripted, launch: Launch) -> None:
    models = json.loads((scripted.agent_dir / "models.json").read_text())
    models["providers"]["scripted"]["models"] += [
        {"id": "cycled-model"},
        {"id": "other-model", "reasoning": True},
    ]
    (scripted.agent_dir / "models.json").write_text(json.dumps(models))
    ui = launch(
        "--models", "other-model:high,scripted/scripted-model", model=None, ready="other-model"
    )
    ui.wait_for("scripted/other-model • high")  # the footer: the pattern's level
    ui.send_keys("C-p")
    ui.wait_for(re.compile(r"Model: scripted/scripted-model\s*$", re.M))
    ui.send_keys("C-p")
    ui.wait_for(re.compile(r"Model: scripted/other-model\s*$", re.M))
    assert "cycled-model" not in ui.capture()
