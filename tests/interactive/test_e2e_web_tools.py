"""The web tools as a person meets them in the terminal: a long page fetched by the model lands
in the session's scratchpad (the transcript says where), and deleting the session from the
``/resume`` picker removes its scratchpad too.
"""

from __future__ import annotations

import json
import time

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, requires_tmux
from tests.web_tools.pages.site import serve

pytestmark = requires_tmux


def test_a_deleted_session_takes_its_scratchpad_along(scripted: Scripted, launch: Launch) -> None:
    tools_json = {"fetch": {"allowPrivate": True}, "scratchpad": {"inlineChars": 500}}
    (scripted.agent_dir / "tools.json").write_text(json.dumps(tools_json))
    with serve() as site:
        scripted.server.add(
            tool_call_reply([tool_call("f1", "web_fetch", {"url": site.url("/long.txt")})]),
            text_reply("Fetched it."),
        )
        ui = launch(width=120, height=40)
        ui.send_text("read the long document")
        ui.send_keys("Enter")
        ui.wait_for("Fetched it.")
        (session_file,) = scripted.session_files()
        scratchpad = session_file.with_name(session_file.stem + ".scratchpad")
        (saved,) = scratchpad.iterdir()
        assert saved.read_text().count("of the long document") == 20_000  # the whole page
        ui.send_keys("C-d")
        assert ui.wait_exit() == 0

    picker = launch("-r", ready="read the long document", width=120, height=40)
    picker.send_keys("C-d")  # delete the highlighted session …
    picker.wait_for("delete")
    picker.send_keys("Enter")  # … confirmed
    deadline = time.monotonic() + 10
    while (session_file.exists() or scratchpad.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not session_file.exists()
    assert not scratchpad.exists()
    picker.kill()
