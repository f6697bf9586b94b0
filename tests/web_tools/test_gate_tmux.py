"""The gate in a real terminal: the real ``knightcode`` in tmux, the scripted model calling
``bash``, the tiny-chat classifier on the real router. The confirm dialog appears with the
probability, and the decision is a notice in the transcript.
"""

from __future__ import annotations

import re

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted
from tests.interactive.conftest import (  # noqa: F401 (fixtures)
    Launch,
    launch,
    requires_tmux,
    scripted,
)
from tests.llama_cpp.routers import KEY
from tests.llama_cpp.servers import LlamaServer

from .test_gate import ALWAYS_ASK, gate_on

pytestmark = requires_tmux


def test_the_confirm_dialog_and_the_decision_show_in_the_terminal(
    scripted: Scripted,  # noqa: F811
    launch: Launch,  # noqa: F811
    router: LlamaServer,
) -> None:
    router.ensure({"tiny-chat"})
    gate_on(scripted.agent_dir, "llama.cpp/tiny-chat", ALWAYS_ASK)
    victim = scripted.project / "victim.txt"
    victim.write_text("precious")
    scripted.server.add(
        tool_call_reply([tool_call("c1", "bash", {"command": "rm -f victim.txt"})]),
        text_reply("All clean."),
    )
    ui = launch(
        width=110,
        height=40,
        KNIGHTCODE_LOAD_PLUGINS="builtin:web-tools,builtin:llama.cpp",
        LLAMA_BASE_URL=router.url,
        LLAMA_API_KEY=KEY,
    )
    ui.send_text("clean up")
    ui.send_keys("Enter")
    ui.wait_for("Allow bash?", timeout=20)
    ui.wait_for("yes 0.80")
    ui.wait_for(re.compile(r"The classifier llama\.cpp/tiny-chat is unsure"))
    assert victim.exists()  # the call waits for the answer
    ui.send_text("y")
    ui.wait_for(re.compile(r"Gate allowed bash — classifier llama\.cpp/tiny-chat"), timeout=20)
    ui.wait_for("All clean.", timeout=20)
    assert not victim.exists()
