"""``/reload`` picks up skills and prompt templates added, changed and removed in a folder the
``skills``/``prompts`` settings name (outside the agent directory), in a real tmux; the system
prompt sent to the scripted model shows the result.
"""

from __future__ import annotations

import json
import shutil

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, launch, requires_tmux, scripted  # noqa: F401
from tests.resources.test_resources_e2e import system_text, user_texts, write_skill, write_template

pytestmark = requires_tmux


def test_reload_applies_added_changed_and_removed_resources(
    scripted: Scripted,  # noqa: F811
    launch: Launch,  # noqa: F811
) -> None:
    shared = scripted.project.parent / "shared"
    settings = scripted.agent_dir / "settings.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    paths = {"skills": [str(shared / "skills")], "prompts": [str(shared / "prompts")]}
    settings.write_text(json.dumps({**data, **paths}))
    write_skill(shared / "skills", "old-skill", "Goes away")
    write_skill(shared / "skills", "kept-skill", "First description")
    write_template(shared / "prompts", "gone", "Gone $1")
    scripted.server.add(text_reply("before"), text_reply("after"), text_reply("templated"))
    ui = launch()
    ui.wait_for("Skills: kept-skill, old-skill")
    ui.send_text("hello")
    ui.send_keys("Enter")
    ui.wait_for("before")
    first = system_text(scripted.server.requests[0].body)
    assert "old-skill" in first and "First description" in first

    shutil.rmtree(shared / "skills" / "old-skill")
    write_skill(shared / "skills", "kept-skill", "Second description")
    write_skill(shared / "skills", "new-skill", "Just added")
    (shared / "prompts" / "gone.md").unlink()
    write_template(shared / "prompts", "fresh", "Fresh $1")
    ui.send_text("/reload")
    ui.send_keys("Enter")
    ui.wait_for("Reloaded plugins")
    # ``/`` completion offers what exists now, not what existed at start.
    ui.send_text("/skill:")
    ui.wait_for("skill:new-skill")
    assert "skill:old-skill" not in ui.capture()
    ui.send_keys("C-u")
    ui.wait_gone("skill:new-skill")
    ui.send_text("hello again")
    ui.send_keys("Enter")
    ui.wait_for("after")
    second = system_text(scripted.server.requests[1].body)
    assert "old-skill" not in second and "new-skill" in second
    assert "Second description" in second and "First description" not in second
    ui.send_text("/fresh x")
    ui.send_keys("Enter")
    ui.wait_for("templated")
    assert user_texts(scripted.server.requests[2].body)[-1] == "Fresh x"
