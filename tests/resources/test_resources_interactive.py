"""Skills and prompt templates in the interactive UI, in a real tmux: ``/`` completion lists
templates (with description and argument hint) and ``skill:`` commands, a template sent from the
editor reaches the model expanded, and ``/reload`` picks up a template added meanwhile."""

from __future__ import annotations

import re

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, launch, requires_tmux, scripted  # noqa: F401

from .test_resources_e2e import EXPANDED, REVIEW, TYPED, user_texts, write_skill, write_template

pytestmark = requires_tmux


def test_completion_expansion_and_reload(scripted: Scripted, launch: Launch) -> None:  # noqa: F811
    write_template(scripted.agent_dir / "prompts", "review", REVIEW)
    write_skill(scripted.agent_dir / "skills", "pdf-tools", "Work with PDF files")
    scripted.server.add(text_reply("reviewed it"), text_reply("shipped it"))
    ui = launch()
    ui.wait_for("Skills: pdf-tools")
    ui.wait_for("Prompts: /review")
    ui.send_text("/revi")
    ui.wait_for(re.compile(r"review\s+Review code — FILE \[FOCUS\.\.\.\]"))
    ui.send_keys("C-u")
    ui.send_text("/skill:p")
    ui.wait_for(re.compile(r"skill:pdf-tools\s+Work with PDF files"))
    ui.send_keys("C-u")
    ui.send_text(TYPED)
    ui.send_keys("Enter")
    ui.wait_for("reviewed it")
    assert user_texts(scripted.server.requests[0].body)[-1] == EXPANDED
    write_template(scripted.agent_dir / "prompts", "ship", "Ship $1 now")
    ui.send_text("/reload")
    ui.send_keys("Enter")
    ui.wait_for("Reloaded plugins")
    ui.send_text("/ship release-2")
    ui.send_keys("Enter")
    ui.wait_for("shipped it")
    assert user_texts(scripted.server.requests[1].body)[-1] == "Ship release-2 now"
