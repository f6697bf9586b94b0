"""Nested tool calls (``ToolContext.call_tool``) through the real turn loop: the lookup among the
available tools, the hooks, the events with ``parentToolCallId``, no ``toolResult`` of their own,
and an abort of the run reaching them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from knightcode import AbortSignal, Block, NestedResult, ToolContext, ToolResultPatch
from knightcode._agent.loop import run_agent_loop
from knightcode._agent.loop_types import LoopConfig
from knightcode._plugins.definitions import ToolDefinition
from tests.agent.test_loop import Recorder, Script, assistant, call, echo_tool, user
from tests.harness import make_tool

OUTER_SCHEMA = {
    "type": "object",
    "properties": {"calls": {"type": "array"}},
    "required": ["calls"],
}


def outer_tool(seen: list[NestedResult]) -> ToolDefinition:
    """``outer``: runs each ``[name, args]`` of ``calls`` as a nested call, one after another."""

    async def execute(call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: Any) -> str:
        for name, arguments in args["calls"]:
            seen.append(await ctx.call_tool(name, arguments))
        return f"ran {len(seen)} nested calls; callable: {sorted(ctx.callable_tools())}"

    return make_tool("outer", execute, parameters=OUTER_SCHEMA)


def loop_config(
    stream: Script,
    tools: list[ToolDefinition],
    available: list[ToolDefinition],
    tmp_path: Path,
    signal: AbortSignal | None = None,
    **kwargs: Any,
) -> LoopConfig:
    signal = signal or AbortSignal()
    return LoopConfig(
        stream=stream,
        tools={tool.name: tool for tool in tools},
        available_tools={tool.name: tool for tool in [*tools, *available]},
        signal=signal,
        tool_context=lambda call_id, tool: ToolContext.local(tmp_path, signal=signal),
        **kwargs,
    )


async def test_nested_calls_reach_inactive_tools_and_are_tagged(tmp_path: Path) -> None:
    seen: list[NestedResult] = []
    hook_calls: list[tuple[str, str]] = []
    results: list[tuple[str, str, bool]] = []

    async def before(call_id: str, name: str, args: dict[str, Any]) -> Block | None:
        hook_calls.append((call_id, name))
        return Block(reason="no nope here") if args.get("value") == "nope" else None

    async def after(
        call_id: str, name: str, args: dict[str, Any], content: Any, details: Any, is_error: bool
    ) -> ToolResultPatch | None:
        results.append((call_id, name, is_error))
        if name == "echo":
            return ToolResultPatch(content=[{"type": "text", "text": f"patched {args['value']}"}])
        return None

    calls = [["echo", {"value": "a"}], ["echo", {"value": "nope"}], ["echo", {}], ["gone", {}]]
    stream = Script(assistant([call("c1", "outer", calls=calls)], "toolUse"), assistant("done"))
    recorder = Recorder()
    produced = await run_agent_loop(
        [user("go")],
        [],
        loop_config(
            stream,
            [outer_tool(seen)],
            [echo_tool()],
            tmp_path,
            before_tool_call=before,
            after_tool_call=after,
        ),
        recorder,
    )
    # echo is not active (the model was offered only outer) but a nested call reaches it
    assert [(r.tool_call_id, r.is_error, r.text) for r in seen] == [
        ("c1.1", False, "patched a"),
        ("c1.2", True, "no nope here"),
        ("c1.3", True, seen[2].text),
        ("c1.4", True, "Tool gone not found"),
    ]
    assert "value" in seen[2].text  # the validation error names the missing argument
    assert seen[0].details == {"value": "a"}
    assert hook_calls == [("c1", "outer"), ("c1.1", "echo"), ("c1.2", "echo")]
    assert results == [("c1.1", "echo", False), ("c1", "outer", False)]
    assert recorder.log == [
        "tool_execution_start:c1",
        "tool_execution_start:c1.1",
        "tool_execution_end:c1.1",
        "tool_execution_start:c1.2",
        "tool_execution_end:c1.2",
        "tool_execution_start:c1.3",
        "tool_execution_end:c1.3",
        "tool_execution_start:c1.4",
        "tool_execution_end:c1.4",
        "tool_execution_end:c1",
    ]
    nested = [e for e in recorder.events if e["type"].startswith("tool_execution")][1:-1]
    assert {e.get("parentToolCallId") for e in nested} == {"c1"}
    starts = recorder.of("tool_execution_start")
    assert "parentToolCallId" not in starts[0] and starts[1] == {
        "type": "tool_execution_start",
        "toolCallId": "c1.1",
        "toolName": "echo",
        "args": {"value": "a"},
        "parentToolCallId": "c1",
    }
    # only the outer call has a toolResult message
    tool_results = [m for m in produced if m["role"] == "toolResult"]
    assert [m["toolCallId"] for m in tool_results] == ["c1"]
    assert "callable: ['echo', 'outer']" in tool_results[0]["content"][0]["text"]


async def test_deeper_nesting_keeps_the_innermost_parent(tmp_path: Path) -> None:
    seen: list[NestedResult] = []
    calls = [["outer", {"calls": [["echo", {"value": "deep"}]]}]]
    stream = Script(assistant([call("c1", "outer", calls=calls)], "toolUse"), assistant("ok"))
    recorder = Recorder()
    await run_agent_loop(
        [user("go")], [], loop_config(stream, [outer_tool(seen)], [echo_tool()], tmp_path), recorder
    )
    tagged = [
        (e["type"], e["toolCallId"], e.get("parentToolCallId"))
        for e in recorder.events
        if e["type"] in ("tool_execution_start", "tool_execution_end")
    ]
    assert tagged == [
        ("tool_execution_start", "c1", None),
        ("tool_execution_start", "c1.1", "c1"),
        ("tool_execution_start", "c1.1.1", "c1.1"),
        ("tool_execution_end", "c1.1.1", "c1.1"),
        ("tool_execution_end", "c1.1", "c1"),
        ("tool_execution_end", "c1", None),
    ]


async def test_an_abort_of_the_run_stops_the_nested_call(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def slow(call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: Any) -> str:
        started.set()
        async with ctx.signal.scope():
            await asyncio.sleep(30)
        return "never"

    seen: list[NestedResult] = []
    signal = AbortSignal()
    stream = Script(assistant([call("c1", "outer", calls=[["slow", {"value": "x"}]])], "toolUse"))
    recorder = Recorder()
    config = loop_config(
        stream, [outer_tool(seen)], [make_tool("slow", slow)], tmp_path, signal=signal
    )
    run = asyncio.ensure_future(run_agent_loop([user("go")], [], config, recorder))
    await asyncio.wait_for(started.wait(), 10)
    signal.abort()
    await asyncio.wait_for(run, 10)
    assert [(r.tool_call_id, r.is_error, r.text) for r in seen] == [
        ("c1.1", True, "Operation aborted")
    ]
    ends = {e["toolCallId"]: e for e in recorder.of("tool_execution_end")}
    assert ends["c1.1"]["parentToolCallId"] == "c1" and ends["c1.1"]["isError"] is True


async def test_call_tool_outside_the_loop_says_so(tmp_path: Path) -> None:
    ctx = ToolContext.local(tmp_path)
    assert ctx.callable_tools() == {}
    try:
        await ctx.call_tool("read", {"path": "x"})
    except RuntimeError as error:
        assert "needs the agent loop" in str(error)
    else:
        raise AssertionError("call_tool outside the loop must raise")
