"""The Python client library itself: process failures, automatic dialog answers, raw sends."""

from __future__ import annotations

from typing import Any

import pytest

from knightcode.rpc import RpcClosedError, RpcError

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
