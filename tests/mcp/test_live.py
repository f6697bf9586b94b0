"""builtin:mcp while a session runs: a server never listed before starts in the background (the
agent is up at once) and its tools are added when its list arrives; ``/reload`` reads mcp.json
again (servers added, removed, switched off). Real SDK servers (``server.py``), the real
executable in RPC mode and in tmux, the scripted model.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import Scripted
from tests.interactive.conftest import Launch, launch, requires_tmux, scripted  # noqa: F401
from tests.rpc.conftest import Rpc, rpc  # noqa: F401 (the fixture)

from .conftest import SERVER, stdio_entry, write_mcp_json

SLOW_SECONDS = 6.0


def _notice(text: str) -> Any:
    def match(record: dict[str, Any]) -> bool:
        return (
            record.get("type") == "extension_ui_request"
            and record.get("method") == "notify"
            and text in str(record.get("message"))
        )

    return match


def _offered(body: object) -> set[str]:
    assert isinstance(body, dict)
    return {tool["function"]["name"] for tool in body.get("tools", [])}


async def test_a_slow_server_does_not_hold_up_the_start(rpc: Rpc) -> None:  # noqa: F811
    slow = {"command": sys.executable, "args": [SERVER, "slow", str(SLOW_SECONDS)]}
    write_mcp_json(rpc.agent_dir, {"slow": slow})
    rpc.server.add(
        tool_call_reply([tool_call("c1", "mcp__slow__add", {"a": 40, "b": 2})]),
        text_reply("Forty-two."),
    )
    began = time.monotonic()
    client = await rpc.start(builtins="builtin:mcp")
    await client.get_state()
    # Up and answering while the server is still asleep (it takes SLOW_SECONDS to start).
    assert time.monotonic() - began < SLOW_SECONDS
    ready = await client.wait_for(_notice("server 'slow' is ready"), timeout=60)
    assert "mcp__slow__add" in ready["message"]
    events = await client.prompt_and_wait("Add them", timeout=60)
    assert "mcp__slow__add" in _offered(rpc.server.requests[0].body)
    (end,) = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["isError"] is False
    assert end["result"]["content"] == [{"type": "text", "text": "42"}]
    # Listed once, cached for the next start.
    cache = json.loads((rpc.agent_dir / "mcp" / "tools-cache.json").read_text())
    assert "add" in [tool["name"] for tool in cache["slow"]["tools"]]


async def test_a_run_waits_for_a_list_on_its_way(rpc: Rpc) -> None:  # noqa: F811
    """A prompt sent before the list arrived waits for it (once, at most the timeout)."""
    slow = {"command": sys.executable, "args": [SERVER, "slow", "2"]}
    write_mcp_json(rpc.agent_dir, {"slow": slow})
    rpc.server.add(
        tool_call_reply([tool_call("c1", "mcp__slow__echo", {"text": "hi"})]), text_reply("ok")
    )
    client = await rpc.start(builtins="builtin:mcp")
    events = await client.prompt_and_wait("Echo", timeout=60)
    assert "mcp__slow__echo" in _offered(rpc.server.requests[0].body)
    # The system prompt the run was sent lists the tool too.
    assert "mcp__slow__echo" in json.dumps(rpc.server.requests[0].body["messages"][0])
    (end,) = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["isError"] is False


@requires_tmux
def test_reload_applies_mcp_json_changes(scripted: Scripted, launch: Launch) -> None:  # noqa: F811
    """``/reload``: a server added to mcp.json is started and its tools offered; a removed one
    is stopped and its tools gone; a switched-off one likewise.
    """
    write_mcp_json(scripted.agent_dir, {"one": stdio_entry()})
    scripted.server.add(text_reply("first"), text_reply("second"), text_reply("third"))
    ui = launch(KNIGHTCODE_LOAD_PLUGINS="builtin:mcp")
    ui.wait_for("server 'one' is ready", timeout=60)
    ui.send_text("hello")
    ui.send_keys("Enter")
    ui.wait_for("first")
    assert "mcp__one__add" in _offered(scripted.server.requests[0].body)

    write_mcp_json(scripted.agent_dir, {"two": stdio_entry()})
    ui.send_text("/reload")
    ui.send_keys("Enter")
    ui.wait_for("mcp.json reloaded: stopped one; added two")
    ui.wait_for("server 'two' is ready", timeout=60)
    ui.send_text("again")
    ui.send_keys("Enter")
    ui.wait_for("second")
    offered = _offered(scripted.server.requests[1].body)
    assert "mcp__two__add" in offered and not any(n.startswith("mcp__one__") for n in offered)

    write_mcp_json(scripted.agent_dir, {"two": stdio_entry(enabled=False)})
    ui.send_text("/reload")
    ui.send_keys("Enter")
    ui.wait_for("mcp.json reloaded: stopped two")
    ui.send_text("last")
    ui.send_keys("Enter")
    ui.wait_for("third")
    assert not any(n.startswith("mcp__") for n in _offered(scripted.server.requests[2].body))


@requires_tmux
def test_an_interactive_run_never_waits_on_a_server(scripted: Scripted, launch: Launch) -> None:  # noqa: F811
    """At the terminal a prompt goes out at once while a server is still starting (the user is
    told once); its tools join the next run when its list has arrived.
    """
    slow = {"command": sys.executable, "args": [SERVER, "slow", str(SLOW_SECONDS)]}
    write_mcp_json(scripted.agent_dir, {"slow": slow})
    scripted.server.add(text_reply("without it"), text_reply("with it"))
    ui = launch(KNIGHTCODE_LOAD_PLUGINS="builtin:mcp")
    began = time.monotonic()
    ui.send_text("hello")
    ui.send_keys("Enter")
    ui.wait_for("without it")
    assert time.monotonic() - began < SLOW_SECONDS
    ui.wait_for("server 'slow' is still starting")
    assert not any(n.startswith("mcp__") for n in _offered(scripted.server.requests[0].body))
    ui.wait_for("server 'slow' is ready", timeout=60)
    ui.send_text("again")
    ui.send_keys("Enter")
    ui.wait_for("with it")
    assert "mcp__slow__add" in _offered(scripted.server.requests[1].body)
