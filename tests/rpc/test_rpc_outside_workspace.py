"""``tools.outsideWorkspace: "ask"`` in RPC mode: a write outside the working directory is asked
about through the client's ``confirm`` dialog, and happens only when the client says yes."""

from __future__ import annotations

import json
from pathlib import Path

from knightcode.testing import text_reply, tool_call, tool_call_reply

from .conftest import Rpc, is_type


async def test_ask_goes_through_the_rpc_confirm_dialog(rpc: Rpc, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (rpc.agent_dir / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 10}, "tools": {"outsideWorkspace": "ask"}})
    )
    rpc.server.add(
        tool_call_reply([tool_call("c1", "write", {"path": "../outside/yes.txt", "content": "y"})]),
        tool_call_reply([tool_call("c2", "write", {"path": "../outside/no.txt", "content": "n"})]),
        text_reply("done"),
    )
    client = await rpc.start()
    mark = client.mark()
    await client.prompt("write both")
    answers = iter([True, False])
    for _ in range(2):
        request = await client.wait_for(
            lambda r: r["type"] == "extension_ui_request" and r["method"] == "confirm",
            since=mark,
        )
        assert request["title"] == "Allow write outside the working directory?"
        assert "is outside the working directory" in request["message"]
        await client.respond_ui(request["id"], confirmed=next(answers))
        mark = client.history.index(request) + 1
    await client.wait_for(is_type("agent_settled"), since=mark)
    ends = [e for e in client.history if e["type"] == "tool_execution_end"]
    assert [e["isError"] for e in ends] == [False, True]
    assert (outside / "yes.txt").read_text() == "y"
    assert not (outside / "no.txt").exists()
    refusal = ends[1]["result"]["content"][0]["text"]
    assert "the user said no" in refusal and "tools.outsideWorkspace" in refusal
