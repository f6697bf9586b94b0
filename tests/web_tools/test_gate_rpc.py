"""The gate asks through the extension UI: a real ``knightcode --mode rpc`` against the scripted
model server, with the tiny-chat classifier on the real router; the test answers the confirm
dialogs as an RPC client would.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from knightcode.rpc import Client
from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.agent.conftest import MODEL, PROVIDER, Scripted, scripted  # noqa: F401 (the fixture)
from tests.llama_cpp.routers import KEY
from tests.llama_cpp.servers import LlamaServer

from .test_gate import ALWAYS_ASK, gate_on


def is_ui(method: str) -> Any:
    return lambda r: r["type"] == "extension_ui_request" and r["method"] == method


def is_type(kind: str) -> Any:
    return lambda r: r["type"] == kind


async def test_the_gate_asks_through_the_extension_ui(
    scripted: Scripted,  # noqa: F811
    router: LlamaServer,
) -> None:
    router.ensure({"tiny-chat"})
    gate_on(scripted.agent_dir, "llama.cpp/tiny-chat", ALWAYS_ASK)
    first = scripted.project / "first.txt"
    second = scripted.project / "second.txt"
    first.write_text("1")
    second.write_text("2")
    scripted.server.add(
        tool_call_reply([tool_call("c1", "bash", {"command": "rm -f first.txt"})]),
        text_reply("removed"),
        tool_call_reply([tool_call("c2", "bash", {"command": "rm -f second.txt"})]),
        text_reply("not removed"),
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        KNIGHTCODE_LOAD_PLUGINS="builtin:web-tools,builtin:llama.cpp",
        LLAMA_BASE_URL=router.url,
        LLAMA_API_KEY=KEY,
    )
    client = Client(["--model", f"{PROVIDER}/{MODEL}"], env=env, cwd=scripted.project, timeout=30)
    await client.start()
    try:
        # Yes: the command runs.
        mark = client.mark()
        await client.prompt("remove the first")
        ask = await client.wait_for(is_ui("confirm"), since=mark)
        assert ask["title"] == "Allow bash?"
        assert "yes 0.80" in ask["message"] and "rm -f first.txt" in ask["message"]
        assert ask["timeout"] == 120_000  # gate.askTimeout, in milliseconds on the wire
        assert first.exists()  # waiting for the answer
        await client.respond_ui(ask["id"], confirmed=True)
        notice = await client.wait_for(is_ui("notify"), since=mark)
        assert notice["message"].startswith("Gate allowed bash — classifier llama.cpp/tiny-chat")
        end = await client.wait_for(is_type("tool_execution_end"), since=mark)
        assert end["isError"] is False
        await client.wait_for(is_type("agent_settled"), since=mark)
        assert not first.exists()

        # No: the command is blocked with the reason.
        mark = client.mark()
        await client.prompt("remove the second")
        ask = await client.wait_for(is_ui("confirm"), since=mark)
        await client.respond_ui(ask["id"], confirmed=False)
        notice = await client.wait_for(is_ui("notify"), since=mark)
        assert notice["message"].startswith("Gate denied bash") and notice["notifyType"] == (
            "warning"
        )
        end = await client.wait_for(is_type("tool_execution_end"), since=mark)
        assert end["isError"] is True
        assert "the user said no" in end["result"]["content"][0]["text"]
        await client.wait_for(is_type("agent_settled"), since=mark)
        assert second.exists()
        session_file = (await client.get_state())["sessionFile"]
    finally:
        await client.close(timeout=10)
    assert session_file is not None
    lines = [json.loads(line) for line in Path(session_file).read_text().splitlines()]
    entries = [
        line["data"]
        for line in lines
        if line["type"] == "custom" and line["customType"] == "web-tools.gate"
    ]
    assert [(e["decision"], e["outcome"], e["toolCallId"]) for e in entries] == [
        ("ask", "allowed", "c1"),
        ("ask", "denied", "c2"),
    ]
    assert all(e["questions"][0]["pYes"] == 0.8 for e in entries)
