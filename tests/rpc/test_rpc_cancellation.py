"""Cancellation over RPC: ``abort`` reaches a model discovery that waits for a live server, the
client owns every task it starts, and the process shuts down cleanly while work runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from knightcode.rpc import Client
from knightcode.testing import text_reply, tool_call, tool_call_reply

from ..silent import ABORT_BOUND, REPEATS, SilentServer, abort_and_time
from .conftest import Rpc
from .test_rpc_plugins import PLUGIN

# A provider whose models are discovered from a server that never answers (SILENT_URL).
LIVE_PROVIDER = """
import os

import httpx

from knightcode import DiscoveredModels, DiscoveryError, Model, hookimpl


async def discover(access):
    try:
        async with httpx.AsyncClient() as client:
            response = await client.get(os.environ["SILENT_URL"] + "/v1/models")
    except httpx.HTTPError as error:
        raise DiscoveryError(str(error)) from None
    ids = [item["id"] for item in response.json()["data"]]
    return DiscoveredModels([Model("live", i, i, "openai-completions", "http://x") for i in ids])


@hookimpl
def register_providers(register):
    register(name="live", api="openai-completions", discover=discover)
"""

# Markers of tasks or futures left behind at exit, and of a shutdown that had to give up.
UNCLEAN = (
    "Task was destroyed but it is pending",
    "was never retrieved",
    "Traceback",
    "did not finish in time",
    "did not settle in time",
)


@pytest.fixture
def silent(monkeypatch: pytest.MonkeyPatch) -> Iterator[SilentServer]:
    with SilentServer() as server:
        monkeypatch.setenv("SILENT_URL", server.url)
        yield server


async def _live_client(rpc: Rpc) -> Client:
    return await rpc.start("-e", str(rpc.plugin("live_provider", LIVE_PROVIDER)))


def _assert_clean_exit(client: Client, status: int) -> None:
    stderr = client.stderr.decode("utf-8", "replace")
    assert status == 0, stderr
    for marker in UNCLEAN:
        assert marker not in stderr, stderr


@pytest.mark.parametrize(
    "command",
    [
        {"type": "get_available_models"},
        {"type": "set_model", "provider": "live", "modelId": "m1"},
    ],
    ids=["get_available_models", "set_model"],
)
async def test_abort_reaches_a_model_discovery_within_100_ms(
    rpc: Rpc, silent: SilentServer, command: dict[str, object]
) -> None:
    client = await _live_client(rpc)
    await client.get_state()  # started, and nothing asked the silent server yet
    assert silent.received == 0
    latencies = []
    for attempt in range(REPEATS):
        asking = asyncio.ensure_future(client.send(command))
        await silent.requests_arrived(attempt + 1)
        aborting: list[asyncio.Future[None]] = []

        def abort(pending: list[asyncio.Future[None]] = aborting) -> None:
            pending.append(asyncio.ensure_future(client.abort()))

        latencies.append(await abort_and_time(abort, asking))
        response = asking.result()
        assert response["success"] is False
        assert response["error"] == "Model discovery aborted"
        await asyncio.gather(*aborting)
    state = await client.get_state()
    assert state["model"]["provider"] == "scripted"  # set_model changed nothing
    worst = max(latencies)
    assert worst < ABORT_BOUND, [f"{seconds * 1000:.1f} ms" for seconds in latencies]
    _assert_clean_exit(client, await client.close())


async def test_end_of_input_aborts_a_hanging_discovery_and_exits_cleanly(
    rpc: Rpc, silent: SilentServer
) -> None:
    client = await _live_client(rpc)
    asking = asyncio.ensure_future(client.send({"type": "get_available_models"}))
    await silent.requests_arrived(1)
    started = asyncio.get_running_loop().time()
    status = await client.close()
    # Shutdown aborted the discovery instead of waiting out the 10 s limit for stuck commands.
    assert asyncio.get_running_loop().time() - started < 5
    response = await asking
    assert response["success"] is False and response["error"] == "Model discovery aborted"
    _assert_clean_exit(client, status)


async def test_end_of_input_while_a_tool_and_a_bash_command_run_exits_cleanly(
    rpc: Rpc,
) -> None:
    client = await rpc.start()
    command = "echo started; sleep 30 & sleep 30"
    rpc.server.add(
        tool_call_reply([tool_call("slow", "bash", {"command": command})]),
        text_reply("never sent"),
    )
    mark = client.mark()
    await client.prompt("run the slow thing")
    await client.wait_for(
        lambda r: r["type"] == "tool_execution_update" and "started" in str(r["partialResult"]),
        since=mark,
    )
    bash = asyncio.ensure_future(client.send({"type": "bash", "command": command, "id": "b"}))
    await client.wait_for(lambda r: r["type"] == "bash_execution_update", since=mark)
    status = await client.close()
    _assert_clean_exit(client, status)
    end = next(r for r in client.history[mark:] if r["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert client.history[-1] == {"type": "agent_settled", "aborted": True}
    response = await bash
    assert response["success"] is True and response["data"]["cancelled"] is True


def _others() -> set[asyncio.Task[object]]:
    return asyncio.all_tasks() - {asyncio.current_task()}


async def test_closing_the_client_leaves_no_task_behind(rpc: Rpc) -> None:
    before = _others()
    asked = asyncio.Event()

    async def never_answer(request: dict[str, object]) -> dict[str, object] | None:
        asked.set()
        await asyncio.Event().wait()  # a dialog nobody answers: the task hangs until close
        return None

    client = await rpc.start(
        "-e", str(rpc.plugin("commands_plugin", PLUGIN)), ui_handler=never_answer
    )
    assert _others() - before  # the readers run
    asking = asyncio.ensure_future(client.send({"type": "prompt", "message": "/ask it"}))
    await asyncio.wait_for(asked.wait(), 30)
    status = await client.close()
    await asyncio.gather(asking, return_exceptions=True)
    assert _others() - before == set()
    _assert_clean_exit(client, status)
