"""The Python client library itself: process failures, automatic dialog answers, raw sends."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from knightcode.rpc import Client, RpcClosedError, RpcError

from .conftest import Rpc, is_type
from .test_rpc_plugins import PLUGIN


async def test_a_process_that_cannot_start_fails_pending_requests(rpc: Rpc) -> None:
    client = await rpc.start(model="no-such-model")
    with pytest.raises(RpcClosedError, match=r"exit status 2\).*unknown model"):
        await client.get_state()
    with pytest.raises(RpcClosedError):  # later calls fail at once instead of timing out
        await client.get_state()
    assert await client.close() == 2


async def test_ui_handler_answers_dialogs(rpc: Rpc) -> None:
    asked: list[str] = []

    async def answer(request: dict[str, Any]) -> dict[str, Any] | None:
        asked.append(request["method"])
        return {
            "confirm": {"confirmed": False},
            "select": {"value": "red"},
            "input": {"value": "Ada"},
            "editor": {"cancelled": True},
        }.get(request["method"])

    client = await rpc.start("-e", str(rpc.plugin("commands_plugin", PLUGIN)), ui_handler=answer)
    mark = client.mark()
    await client.prompt("/ask it")
    notice = await client.wait_for(lambda r: r.get("method") == "notify", since=mark)
    assert notice["message"] == "ok=False color=red name=Ada text=None"
    assert asked == ["confirm", "select", "input", "editor", "notify"]


async def test_failed_commands_raise_and_raw_responses_land_in_history(rpc: Rpc) -> None:
    client = await rpc.start()
    with pytest.raises(RpcError) as caught:
        await client.call({"type": "launch"})
    assert caught.value.command == "launch" and caught.value.error == "Unknown command: launch"
    mark = client.mark()
    await client.send_raw(b'{"type":"get_state","id":"mine"}\n')
    response = await client.wait_for(is_type("response"), since=mark)
    assert response["id"] == "mine" and response["data"]["isStreaming"] is False


# A stand-in for knightcode that answers with data of the wrong shape: the client's typed methods
# must notice instead of handing back something their return type does not describe.
WRONG_SHAPES = r"""
import json, sys
print(5, flush=True)  # JSON, but not a record
for line in sys.stdin:
    command = json.loads(line)
    data = {"get_state": {"model": {}}, "fork": {"cancelled": False}}.get(command["type"])
    response = {"type": "response", "command": command["type"], "success": True, "data": data}
    print(json.dumps({"id": command["id"], **response}), flush=True)
"""


async def test_response_data_is_checked_against_the_shared_shapes() -> None:
    async with Client(command=[sys.executable, "-c", WRONG_SHAPES], timeout=20) as client:
        with pytest.raises(TypeError, match="get_state: unexpected response data"):
            await client.get_state()
        assert await client.fork("e1") == {"cancelled": False}  # "text" is NotRequired
        with pytest.raises(TypeError, match="get_fork_messages: unexpected response data None"):
            await client.get_fork_messages()
        assert client.stray_lines == [b"5"]
        assert client.history == []
