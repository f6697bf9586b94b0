"""Plugins in RPC mode: slash commands, the extension UI sub-protocol, extension errors."""

from __future__ import annotations

import asyncio

from knightcode.testing import text_reply

from .conftest import Rpc, is_type

PLUGIN = """
from knightcode import hookimpl


async def ask(args, ctx):
    ok = await ctx.ui.confirm("Proceed?", f"run {args}")
    color = await ctx.ui.select("Color?", ["red", "green"])
    name = await ctx.ui.input("Name?", "your name")
    text = await ctx.ui.editor("Edit", "prefilled")
    ctx.ui.notify(f"ok={ok} color={color} name={name} text={text}", "info")


async def hurry(args, ctx):
    name = await ctx.ui.input("Name?", "", timeout=0.2)
    sure = await ctx.ui.confirm("Sure?", "really", timeout=0.2)
    choice = await ctx.ui.select("Pick", ["a", "b"], timeout=0.2)
    ctx.ui.notify(f"name={name!r} sure={sure!r} choice={choice!r}")


def status(args, ctx):
    ctx.ui.set_status("build", "green")
    ctx.ui.set_widget("todo", ["one", "two"])
    ctx.ui.set_title("knightcode: " + args)
    ctx.ui.set_editor_text("draft")


def explode(args, ctx):
    raise RuntimeError("command went wrong")


@hookimpl
def register_commands(register):
    register(name="ask", description="Ask the user things", handler=ask)
    register(name="hurry", description="Dialogs that time out", handler=hurry)
    register(name="status", description="Notices", handler=status)
    register(name="explode", handler=explode)
"""

FAILING_HOOKS = """
from knightcode import hookimpl


@hookimpl
def turn_start(turn_index, ctx):
    raise ValueError(f"turn {turn_index} handler broke")
"""


def ui_request(method: str):
    return lambda r: r["type"] == "extension_ui_request" and r["method"] == method


async def test_get_commands_lists_plugin_commands(rpc: Rpc) -> None:
    path = rpc.plugin("commands_plugin", PLUGIN)
    client = await rpc.start("-e", str(path))
    commands = await client.get_commands()
    assert [c["name"] for c in commands] == ["ask", "hurry", "status", "explode"]
    assert commands[0] == {
        "name": "ask",
        "description": "Ask the user things",
        "source": "extension",
        "location": "cli",
        "path": str(path),
    }


async def test_dialog_round_trip_while_the_agent_streams(rpc: Rpc) -> None:
    rpc.server.add(rpc.gate_reply(), text_reply("done"))
    client = await rpc.start("-e", str(rpc.plugin("commands_plugin", PLUGIN)))
    mark = client.mark()
    await client.prompt("work")
    await client.wait_for(is_type("tool_execution_start"), since=mark)
    # A plugin command runs at once, even while streaming; its dialogs go to the client.
    pending = asyncio.ensure_future(
        client.send({"id": "cmd", "type": "prompt", "message": "/ask deploy now"})
    )
    confirm = await client.wait_for(ui_request("confirm"), since=mark)
    assert (confirm["title"], confirm["message"]) == (
        "Proceed?",
        "run deploy now",
    ) and "timeout" not in confirm
    assert not pending.done()  # the command waits for the dialog
    await client.respond_ui(confirm["id"], confirmed=True)
    select = await client.wait_for(ui_request("select"), since=mark)
    assert select["options"] == ["red", "green"]
    await client.respond_ui(select["id"], value="green")
    prompt = await client.wait_for(ui_request("input"), since=mark)
    assert prompt["placeholder"] == "your name"
    await client.respond_ui(prompt["id"], cancelled=True)
    editor = await client.wait_for(ui_request("editor"), since=mark)
    assert editor["prefill"] == "prefilled"
    await client.respond_ui(editor["id"], value="edited\u2028text")
    notice = await client.wait_for(ui_request("notify"), since=mark)
    assert notice["message"] == "ok=True color=green name=None text=edited\u2028text"
    assert notice["notifyType"] == "info"
    assert (await pending)["success"] is True
    assert (await client.get_state())["isStreaming"] is True  # the gated run went on meanwhile
    await rpc.release()
    await client.wait_for(is_type("agent_settled"), since=mark)
    # The command text never reached the model.
    assert all("/ask" not in str(r.body) for r in rpc.server.requests)


async def test_dialog_timeouts_resolve_to_defaults(rpc: Rpc) -> None:
    client = await rpc.start("-e", str(rpc.plugin("commands_plugin", PLUGIN)))
    mark = client.mark()
    await client.prompt("/hurry")
    notice = await client.wait_for(ui_request("notify"), since=mark)
    assert notice["message"] == "name=None sure=False choice=None"
    requests = [
        e
        for e in client.history[mark:]
        if e["type"] == "extension_ui_request" and e["method"] != "notify"
    ]
    assert [(r["method"], r["timeout"]) for r in requests] == [
        ("input", 200),
        ("confirm", 200),
        ("select", 200),
    ]
    # A late answer to a dialog that timed out is ignored.
    await client.respond_ui(requests[0]["id"], value="too late")
    assert (await client.get_state())["isStreaming"] is False


async def test_fire_and_forget_notices(rpc: Rpc) -> None:
    client = await rpc.start("-e", str(rpc.plugin("commands_plugin", PLUGIN)))
    mark = client.mark()
    await client.prompt("/status release")
    await client.wait_for(ui_request("set_editor_text"), since=mark)
    notices = [
        {k: v for k, v in e.items() if k not in ("id", "type")}
        for e in client.history[mark:]
        if e["type"] == "extension_ui_request"
    ]
    assert notices == [
        {"method": "setStatus", "statusKey": "build", "statusText": "green"},
        {"method": "setWidget", "widgetKey": "todo", "widgetLines": ["one", "two"]},
        {"method": "setTitle", "title": "knightcode: release"},
        {"method": "set_editor_text", "text": "draft"},
    ]


async def test_failing_command_and_hook_become_extension_errors(rpc: Rpc) -> None:
    rpc.server.add(text_reply("still fine"))
    commands = rpc.plugin("commands_plugin", PLUGIN)
    failing = rpc.plugin("failing_hooks", FAILING_HOOKS)
    client = await rpc.start("-e", str(commands), "-e", str(failing))
    mark = client.mark()
    await client.prompt("/explode")
    error = await client.wait_for(is_type("extension_error"), since=mark)
    assert error["extensionPath"] == str(commands) and error["event"] == "command"
    assert error["error"].startswith("RuntimeError: command went wrong")

    events = await client.prompt_and_wait("hello")
    errors = [e for e in events if e["type"] == "extension_error"]
    assert errors == [
        {
            "type": "extension_error",
            "extensionPath": str(failing),
            "event": "turn_start",
            "error": errors[0]["error"],
        }
    ]
    assert errors[0]["error"].startswith("ValueError: turn 0 handler broke")
    assert events[-1] == {"type": "agent_settled", "aborted": False}
    assert await client.get_last_assistant_text() == "still fine"


async def test_queueing_a_plugin_command_is_refused(rpc: Rpc) -> None:
    client = await rpc.start("-e", str(rpc.plugin("commands_plugin", PLUGIN)))
    response = await client.send({"type": "steer", "message": "/status x"})
    assert response["success"] is False and "send /status as a 'prompt'" in response["error"]


async def test_plugin_that_fails_to_load_is_reported(rpc: Rpc) -> None:
    broken = rpc.plugin("broken", "import no_such_module_here\n")
    client = await rpc.start("-e", str(broken))
    error = await client.wait_for(is_type("extension_error"))
    assert error["extensionPath"] == str(broken) and error["event"] == "load"
    assert "no_such_module_here" in error["error"]
    assert (await client.get_state())["isStreaming"] is False


QUIT_PLUGIN = """
from knightcode import hookimpl


async def leave(args, ctx):
    await ctx.agent.wait_idle()
    ctx.shutdown()


@hookimpl
def register_commands(register):
    register(name="quit", handler=leave)
"""


async def test_a_plugin_command_can_shut_knightcode_down(rpc: Rpc) -> None:
    client = await rpc.start("-e", str(rpc.plugin("quit_plugin", QUIT_PLUGIN)))
    await client.prompt("/quit")
    assert client.process is not None
    assert await client.process.wait() == 0  # stdin is still open: the plugin ended the session


async def test_end_of_input_resolves_open_dialogs_to_defaults(rpc: Rpc) -> None:
    client = await rpc.start("-e", str(rpc.plugin("commands_plugin", PLUGIN)))
    mark = client.mark()
    pending = asyncio.ensure_future(client.send({"type": "prompt", "message": "/ask bye"}))
    await client.wait_for(ui_request("confirm"), since=mark)
    assert await client.close() == 0
    notice = await client.wait_for(ui_request("notify"), since=mark)
    assert notice["message"] == "ok=False color=None name=None text=None"
    assert (await pending)["success"] is True  # the command finished and was answered before exit
