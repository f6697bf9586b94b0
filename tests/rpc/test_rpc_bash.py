"""The ``bash`` command: streamed output, the recorded ``bashExecution`` message, abort."""

from __future__ import annotations

import asyncio
import os

from knightcode.testing import text_reply

from .conftest import Rpc, is_type


async def test_bash_streams_updates_and_records_a_message(rpc: Rpc) -> None:
    rpc.server.add(text_reply("seen"))
    client = await rpc.start()
    mark = client.mark()
    response = await client.send(
        {"id": "b1", "type": "bash", "command": "printf 'one\\n'; printf 'two ü\\n' >&2; exit 3"}
    )
    assert response["success"] is True
    assert response["data"] == {
        "output": "one\ntwo ü\n",
        "exitCode": 3,
        "cancelled": False,
        "truncated": False,
    }
    updates = [e for e in client.history[mark:] if e["type"] == "bash_execution_update"]
    assert updates and all(u["id"] == "b1" for u in updates)
    assert "".join(u["delta"] for u in updates) == "one\ntwo ü\n"

    messages = await client.get_messages()
    assert messages[-1]["role"] == "bashExecution" and messages[-1]["command"].startswith(
        "printf 'one"
    )
    assert (messages[-1]["exitCode"], messages[-1]["output"]) == (3, "one\ntwo ü\n")
    # The output reaches the model with the next prompt.
    await client.prompt_and_wait("what happened?")
    sent = rpc.server.requests[0].body["messages"]
    assert "two ü" in str(sent[1]["content"]) and "exited with code 3" in str(sent[1]["content"])
    lines = rpc.session_lines((await client.get_state())["sessionFile"])
    assert [e["message"]["role"] for e in lines if e["type"] == "message"] == [
        "bashExecution",
        "user",
        "assistant",
    ]


async def test_bash_excluded_from_context_and_long_output_truncated(rpc: Rpc) -> None:
    rpc.server.add(text_reply("ok"))
    client = await rpc.start()
    chunks: list[str] = []
    result = await client.bash("seq 1 3000", exclude_from_context=True, on_output=chunks.append)
    assert result["truncated"] is True and result["exitCode"] == 0
    assert result["output"].endswith("3000\n") and not result["output"].startswith("1\n")
    full = result["fullOutputPath"]
    with open(full) as spilled:
        assert spilled.readline() == "1\n"
    assert "".join(chunks).splitlines() == [str(n) for n in range(1, 3001)]  # every line streamed
    messages = await client.get_messages()
    assert messages[-1]["excludeFromContext"] is True and messages[-1]["fullOutputPath"] == full
    await client.prompt_and_wait("hi")
    assert [m["role"] for m in rpc.server.requests[0].body["messages"]] == ["system", "user"]
    os.unlink(full)


async def test_abort_bash_kills_the_process_group(rpc: Rpc) -> None:
    client = await rpc.start()
    pid_file = rpc.project / "child.pid"
    mark = client.mark()
    # The shell starts a grandchild; killing only the shell would leave it running.
    running = asyncio.ensure_future(
        client.send(
            {
                "id": "long",
                "type": "bash",
                "command": f"sleep 300 & echo $! > {pid_file}; echo started; wait",
            }
        )
    )
    await client.wait_for(
        lambda e: e["type"] == "bash_execution_update" and "started" in e["delta"], since=mark
    )
    await client.abort_bash()
    response = await running
    assert response["success"] is True
    assert response["data"]["cancelled"] is True and response["data"]["exitCode"] is None
    child = int(pid_file.read_text())
    # The group was signalled before the response; wait (bounded) for the kernel to finish it.
    for _ in range(500):
        if not _is_running(child):
            break
        await asyncio.sleep(0.01)
    assert not _is_running(child)
    message = (await client.get_messages())[-1]
    assert message["role"] == "bashExecution" and message["cancelled"] is True


def _is_running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (it is not our child, so we cannot reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


async def test_bash_while_streaming_is_recorded_after_the_run(rpc: Rpc) -> None:
    rpc.server.add(rpc.gate_reply(), text_reply("after the gate"))
    client = await rpc.start()
    mark = client.mark()
    await client.prompt("start")
    await client.wait_for(is_type("tool_execution_start"), since=mark)
    result = await client.bash("echo side")
    assert result["output"] == "side\n"
    assert "bashExecution" not in [m["role"] for m in await client.get_messages()]
    await rpc.release()
    await client.wait_for(is_type("agent_settled"), since=mark)
    roles = [m["role"] for m in await client.get_messages()]
    assert roles == ["user", "assistant", "toolResult", "assistant", "bashExecution"]


async def test_empty_bash_command_is_an_error(rpc: Rpc) -> None:
    client = await rpc.start()
    response = await client.send({"type": "bash", "command": "   "})
    assert response["success"] is False and "command cannot be empty" in response["error"]
