"""The session's tool set: plugins list the available tools, switch them on and off for the next
request (the system prompt follows), settings ``tools.enabled`` sets the defaults, and a
``/reload`` keeps what the session chose.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from knightcode import ToolInfo
from knightcode._agent.tool_set import ToolSet
from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.harness import Builder, make_tool


def _echo(tool_call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> str:
    return "ok"


def offered(s: Any, index: int) -> list[str]:
    """The tool names the model was offered in request ``index``."""
    body = s.server.requests[index].body
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def system_text(s: Any, index: int) -> str:
    return str(s.server.requests[index].body["messages"][0]["content"])


async def test_available_tools_name_their_origin_and_state(scenario: Builder) -> None:
    s = await scenario(tools=[make_tool("echo", _echo)], builtin=["read"])
    infos = {info.name: info for info in s.agent.available_tools()}
    assert infos["echo"] == ToolInfo("echo", "test-tools", "the echo test tool", True)
    assert infos["read"].origin == "core" and infos["read"].active
    assert infos["grep"].origin == "core" and not infos["grep"].active
    assert s.agent.active_tools == ["read", "echo"]


async def test_switching_tools_changes_the_next_request_and_the_prompt(scenario: Builder) -> None:
    scenario.system_prompt = None  # the standard prompt, which lists the active tools
    s = await scenario(tools=[make_tool("echo", _echo)], builtin=["read"])
    s.server.add(text_reply("one"), text_reply("two"), text_reply("three"))
    await s.agent.prompt("first")
    assert offered(s, 0) == ["read", "echo"]
    assert "- grep:" not in system_text(s, 0)

    s.agent.set_active_tools(["grep", "echo"])
    await s.agent.prompt("second")
    assert offered(s, 1) == ["grep", "echo"]
    prompt = system_text(s, 1)
    assert "grep" in prompt and "- read:" not in prompt

    s.agent.set_tool_enabled("echo", False)
    await s.agent.prompt("third")
    assert offered(s, 2) == ["grep"]


async def test_an_unknown_tool_changes_nothing(scenario: Builder) -> None:
    s = await scenario(builtin=["read"])
    with pytest.raises(ValueError, match=r"unknown tool 'nope'.*available: .*read"):
        s.agent.set_active_tools(["read", "nope"])
    assert s.agent.active_tools == ["read"]


async def test_saving_a_switch_writes_user_settings(scenario: Builder) -> None:
    s = await scenario(builtin=["read"])
    s.agent.set_tool_enabled("grep", True, save=True)
    data = json.loads((s.agent.options.agent_dir / "settings.json").read_text())
    assert data["tools"]["enabled"] == {"grep": True}
    assert s.agent.active_tools == ["read", "grep"]


async def test_settings_switch_single_tools_at_start(scenario: Builder) -> None:
    settings = {"tools": {"enabled": {"grep": True, "edit": False, "echo": False, "gone": True}}}
    scenario.builtin_tools = None  # no --tools: what the command line does by default
    s = await scenario(tools=[make_tool("echo", _echo)], settings=settings)
    # defaults read, bash, edit, write + echo; grep on, edit and echo off, "gone" ignored
    assert s.agent.active_tools == ["read", "bash", "write", "grep"]


async def test_command_line_tools_win_over_settings(scenario: Builder) -> None:
    settings = {"tools": {"enabled": {"read": False}}}
    s = await scenario(builtin=["read"], settings=settings)
    assert s.agent.active_tools == ["read"]


def test_a_reload_keeps_the_sessions_choices() -> None:
    tools = {name: make_tool(name, _echo) for name in ("a", "b", "c", "d")}
    prompts: list[list[str]] = []

    def build(active: dict[str, Any]) -> str:
        prompts.append(list(active))
        return " ".join(active)

    tool_set = ToolSet(tools, {}, ["a", "b"], "a b", build)
    tool_set.set_active(["a", "c"])  # b off, c on
    assert tool_set.system_prompt == "a c"
    # A reload: d is a new default, and the session's switches still hold.
    tool_set.replace(tools, {}, ["a", "b", "d"], build, system_prompt="a b d")
    assert list(tool_set.active) == ["a", "d", "c"]
    assert tool_set.system_prompt == "a d c"
    # Without switches, the caller's prompt for the defaults is taken as it is.
    fresh = ToolSet(tools, {}, ["a"], "a", build)
    fresh.replace(tools, {}, ["a", "b"], build, system_prompt="given")
    assert fresh.system_prompt == "given" and prompts == [["a", "c"], ["a", "d", "c"]]


async def test_tools_added_and_removed_while_the_session_runs(scenario: Builder) -> None:
    """A plugin adds tools (an MCP server's list arriving late) and removes them; the next run
    offers exactly what is there, with the system prompt listing it, and ``available_tools``
    names the origin.
    """
    scenario.system_prompt = None
    s = await scenario(builtin=["read"])
    s.server.add(text_reply("one"), text_reply("two"), text_reply("three"))
    await s.agent.prompt("first")
    assert offered(s, 0) == ["read"]

    names = s.agent.add_tools(
        [make_tool("late", _echo, description="arrived late"), make_tool("quiet", _echo)],
        origin="my-plugin",
        active=True,
    )
    s.agent.add_tools([make_tool("hidden", _echo)], origin="my-plugin", active=False)
    assert names == ["late", "quiet"]
    infos = {info.name: info for info in s.agent.available_tools()}
    assert infos["late"].origin == "my-plugin" and infos["late"].active
    assert not infos["hidden"].active
    await s.agent.prompt("second")
    assert offered(s, 1) == ["read", "late", "quiet"]
    assert "late" in system_text(s, 1)

    assert s.agent.remove_tools(["quiet", "not-there"]) == ["quiet"]
    await s.agent.prompt("third")
    assert offered(s, 2) == ["read", "late"]
    assert "quiet" not in {info.name for info in s.agent.available_tools()}


def test_added_and_removed_tools_survive_a_reload() -> None:
    tools = {name: make_tool(name, _echo) for name in ("a", "b")}
    tool_set = ToolSet(tools, {"b": "p"}, ["a", "b"], "a b", lambda active: " ".join(active))
    tool_set.add([make_tool("x", _echo)], "p")
    tool_set.remove(["b"])
    assert list(tool_set.active) == ["a", "x"] and tool_set.system_prompt == "a x"
    # The reload re-lists the registered tools (b among them): x stays, b stays removed.
    tool_set.replace(tools, {"b": "p"}, ["a", "b"], lambda active: " ".join(active))
    assert list(tool_set.active) == ["a", "x"] and "b" not in tool_set.available
    # Adding b again brings it back; a new definition of x keeps it active.
    tool_set.add([make_tool("b", _echo), make_tool("x", _echo, description="v2")], "p")
    assert list(tool_set.active) == ["a", "x", "b"]
    assert tool_set.available["x"].description == "v2"


async def test_a_run_in_progress_keeps_its_tools(scenario: Builder) -> None:
    """A tool added while the model answers is offered from the next run, not mid-run."""
    s = await scenario(builtin=["read"])

    def add_late(tool_call_id: str, args: dict[str, Any], ctx: Any, on_update: Any) -> str:
        s.agent.add_tools([make_tool("late", _echo)], origin="p")
        return "added"

    s.agent.add_tools([make_tool("adder", add_late)], origin="p")
    s.server.add(
        tool_call_reply([tool_call("c1", "adder", {"value": "x"})]),
        text_reply("done"),
        text_reply("again"),
    )
    await s.agent.prompt("first")
    assert offered(s, 0) == ["read", "adder"] and offered(s, 1) == ["read", "adder"]
    await s.agent.prompt("second")
    assert offered(s, 2) == ["read", "adder", "late"]
