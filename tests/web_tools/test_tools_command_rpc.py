"""``/tools`` over RPC: a real ``knightcode --mode rpc`` whose menu the test answers like a
client would (``extension_ui_request`` select/input), against the scripted model server.

It checks what a person relies on: the key is asked for masked (``"secret": true``) and never
comes back in the event stream, stderr or the session file; a value is written 0600 keeping the
rest; a wrong value is refused with the file and the key and leaves the file alone.
"""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

from knightcode.rpc import Client
from knightcode.testing import ScriptedServer, text_reply
from knightcode_builtins.web_tools.config import load_tools_config, tools_json_path
from tests.rpc.conftest import Rpc

SECRET = "BSA-rpc-secret-5f4e3d2c1b"

Record = dict[str, Any]


class Menu:
    """Answers ``/tools``'s dialogs in order, as an RPC client's user would."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.position = client.mark()
        self.command: asyncio.Future[Record] | None = None

    async def open(self) -> None:
        self.command = asyncio.ensure_future(
            self.client.send({"type": "prompt", "message": "/tools"})
        )

    async def next(self, method: str) -> Record:
        """The next dialog or notice of ``method`` after the last one answered."""

        def wanted(record: Record) -> bool:
            return record.get("type") == "extension_ui_request" and record["method"] == method

        request = await self.client.wait_for(wanted, since=self.position)
        self.position = next(
            i + 1 for i, r in enumerate(self.client.history) if r is request and i >= self.position
        )
        return request

    async def choose(self, prefix: str) -> Record:
        """Pick the one option starting with ``prefix``; returns the select request."""
        request = await self.next("select")
        matches = [o for o in request["options"] if o.startswith(prefix)]
        assert len(matches) == 1, f"{prefix!r} in {request['options']}"
        await self.client.respond_ui(request["id"], value=matches[0])
        return request

    async def type(self, text: str) -> Record:
        request = await self.next("input")
        await self.client.respond_ui(request["id"], value=text)
        return request

    async def escape(self, method: str = "select") -> Record:
        request = await self.next(method)
        await self.client.respond_ui(request["id"], cancelled=True)
        return request

    async def notice(self) -> Record:
        return await self.next("notify")

    async def closed(self) -> None:
        assert self.command is not None
        assert (await self.command)["success"] is True


async def start(rpc: Rpc) -> Client:
    return await rpc.start(builtins="builtin:web-tools")


async def test_the_brave_key_is_asked_masked_and_never_comes_back(rpc: Rpc) -> None:
    rpc.server.add(text_reply("first"), text_reply("second"))
    client = await start(rpc)
    await client.prompt_and_wait("hello")
    menu = Menu(client)
    await menu.open()
    top = await menu.choose("Brave key: not set")
    assert top["options"][0] == "Tools: 6 of 10 on"
    brave = await menu.choose("Set a new key")
    assert brave["title"] == "Brave Search key: not set"
    asked = await menu.type(SECRET)
    assert asked["secret"] is True
    notice = await menu.notice()
    path = tools_json_path(rpc.agent_dir)
    assert notice["message"] == f"Stored the Brave key in {path} (mode 0600)"
    again = await menu.choose("Clear the key in tools.json")  # back at the key's menu
    assert again["title"] == "Brave Search key: set (tools.json)"
    assert (await menu.notice())["message"] == f"Removed the Brave key from {path} (mode 0600)"
    await menu.escape()  # the key's menu, now offering "Set a new key" only
    await menu.choose("Brave key: not set")
    await menu.choose("Set a new key")
    await menu.type(SECRET)
    await menu.notice()
    await menu.escape()  # the key's menu
    await menu.escape()  # the top: /tools closes
    await menu.closed()

    assert load_tools_config(rpc.agent_dir).brave_api_key == SECRET
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    await client.prompt_and_wait("again")
    session_file = (await client.get_state())["sessionFile"]
    await client.close()
    assert SECRET not in Path(session_file).read_text()
    assert SECRET not in json.dumps(client.history)
    assert SECRET not in client.stderr.decode()
    # Neither did it reach the model.
    assert all(SECRET not in json.dumps(request.body) for request in rpc.server.requests)


async def test_a_value_is_edited_and_a_wrong_one_refused(rpc: Rpc) -> None:
    path = tools_json_path(rpc.agent_dir)
    path.write_text(json.dumps({"braveApiKey": SECRET, "search": {"count": 3}}))
    client = await start(rpc)
    menu = Menu(client)
    await menu.open()
    top = await menu.choose("Scratchpad: inlineChars 40000 · headChars 8000 · dir none")
    assert top["options"][1] == "Brave key: set (tools.json)"
    await menu.choose("inlineChars: 40000")
    asked = await menu.type("20000")
    assert asked["title"].startswith("scratchpad.inlineChars: ") and "secret" not in asked
    assert asked["placeholder"] == "now 40000; empty for the default (40000)"
    assert (await menu.notice())["message"] == f"scratchpad.inlineChars = 20000 (in {path})"
    await menu.choose("inlineChars: 20000")  # the section shows the new value
    await menu.type("lots")
    refused = await menu.notice()
    assert refused["notifyType"] == "error"
    assert refused["message"] == f"{path}: scratchpad.inlineChars: must be a whole number"
    before = path.read_text()
    await menu.choose("headChars: 8000")
    await menu.escape("input")  # Esc in the field keeps the value
    await menu.escape()  # back to the top
    await menu.choose("Gate: enabled off")
    await menu.choose("thresholds.allow: 0.2")
    await menu.type("0.9")
    refused = await menu.notice()
    assert refused["message"] == (
        f"{path}: gate.thresholds.allow: must not be above thresholds.block (0.8)"
    )
    assert path.read_text() == before  # nothing written by a refused value
    await menu.choose("enabled: off")  # a switch toggles at once
    assert (await menu.notice())["message"] == f"gate.enabled = on (in {path})"
    await menu.choose("classifier: none")
    picker = await menu.choose("another one")
    assert picker["title"] == "gate.classifier: now none"
    assert picker["options"] == ["none (no classifier)", "another one (type its provider/id)…"]
    await menu.type("llama.cpp/tiny-judge")
    await menu.notice()
    await menu.escape()
    await menu.choose("Codemode: enabled off")
    await menu.choose("timeout: 120")
    await menu.type("")  # empty: back to the default
    await menu.notice()
    await menu.escape()
    await menu.escape()
    await menu.closed()

    data = json.loads(path.read_text())
    assert data == {
        "braveApiKey": SECRET,
        "search": {"count": 3},
        "scratchpad": {"inlineChars": 20000},
        "gate": {"enabled": True, "classifier": "llama.cpp/tiny-judge"},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert SECRET not in json.dumps(client.history)


async def test_a_broken_tools_json_is_reported_not_overwritten(rpc: Rpc) -> None:
    path = tools_json_path(rpc.agent_dir)
    path.write_text('{"codemode": {"timeout": 0}}')
    client = await start(rpc)
    menu = Menu(client)
    await menu.open()
    top = await menu.choose("Codemode: tools.json has an error")
    assert top["options"][1] == "Brave key: ?"
    notice = await menu.notice()
    assert notice["notifyType"] == "error"
    assert notice["message"] == (
        f"{path}: codemode.timeout: must be between 1 and 3600 (got 0) (fix the file to edit it "
        "here)"
    )
    await menu.escape()
    await menu.closed()
    assert path.read_text() == '{"codemode": {"timeout": 0}}'


def offered(server: ScriptedServer, index: int) -> list[str]:
    """The tool names the model was offered in request ``index``."""
    return [tool["function"]["name"] for tool in server.requests[index].body.get("tools", [])]


def system_text(server: ScriptedServer, index: int) -> str:
    return str(server.requests[index].body["messages"][0]["content"])


async def test_switching_a_tool_changes_the_next_request_and_the_default(rpc: Rpc) -> None:
    rpc.server.add(*(text_reply(f"reply {n}") for n in range(4)))
    client = await start(rpc)
    await client.prompt_and_wait("one")
    assert offered(rpc.server, 0) == ["read", "bash", "edit", "write", "web_search", "web_fetch"]
    assert "web_fetch" in system_text(rpc.server, 0)

    menu = Menu(client)
    await menu.open()
    await menu.choose("Tools: 6 of 10 on")
    tools = await menu.choose("web_fetch ")
    assert tools["options"][0].split() == ["read", "on", "core"]
    assert tools["options"][5].split() == ["find", "off", "core"]
    assert tools["options"][8].split() == ["web_fetch", "on", "builtin:web-tools"]
    settings = rpc.agent_dir / "settings.json"
    assert (await menu.notice())["message"] == (
        f"web_fetch off from the next request, and for new sessions (tools.enabled in {settings})"
    )
    again = await menu.choose("grep ")  # the list shows the change; switch grep on too
    assert again["options"][8].split() == ["web_fetch", "off", "builtin:web-tools"]
    await menu.notice()
    await menu.escape()  # the tool list
    top = await menu.escape()  # the top: closes
    assert top["options"][0] == "Tools: 6 of 10 on"
    await menu.closed()

    await client.prompt_and_wait("two")
    assert offered(rpc.server, 1) == ["read", "bash", "edit", "write", "web_search", "grep"]
    assert "web_fetch" not in system_text(rpc.server, 1)  # the prompt was rebuilt
    assert json.loads(settings.read_text())["tools"]["enabled"] == {
        "web_fetch": False,
        "grep": True,
    }
    await client.close()

    # A new session starts with the saved choice.
    second = await start(rpc)
    await second.prompt_and_wait("three")
    assert offered(rpc.server, 2) == ["read", "bash", "edit", "write", "web_search", "grep"]
