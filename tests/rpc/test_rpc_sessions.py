"""Session commands over RPC: statistics, fork and switch, new session, clone, names, export."""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode.rpc import RpcError
from knightcode.testing import text_reply, tool_call, tool_call_reply, usage

from .conftest import CONTEXT_WINDOW, Rpc, is_type, roles, text_of


def message_texts(lines: list[dict]) -> list[tuple[str, str]]:
    return [(e["message"]["role"], text_of(e["message"])) for e in lines if e["type"] == "message"]


async def test_session_stats_count_messages_tokens_and_context_usage(rpc: Rpc) -> None:
    (rpc.project / "a.txt").write_text("A")
    rpc.server.add(
        tool_call_reply(
            [tool_call("c1", "read", {"path": "a.txt"})],
            usage=usage(input=100, output=10, cache_read=50),
        ),
        text_reply("done", usage=usage(input=200, output=20)),
    )
    client = await rpc.start()
    await client.prompt_and_wait("read it")
    stats = await client.get_session_stats()
    state = await client.get_state()
    assert stats["sessionFile"] == state["sessionFile"] and stats["sessionId"] == state["sessionId"]
    assert (
        stats["userMessages"],
        stats["assistantMessages"],
        stats["toolCalls"],
        stats["toolResults"],
        stats["totalMessages"],
    ) == (1, 2, 1, 1, 4)
    assert stats["tokens"] == {
        "input": 300,
        "output": 30,
        "cacheRead": 50,
        "cacheWrite": 0,
        "total": 380,
    }
    assert stats["cost"] == 0
    context = stats["contextUsage"]
    # The last answer reported 200 + 20 tokens in all, and nothing came after it.
    assert context["contextWindow"] == CONTEXT_WINDOW and context["tokens"] == 220
    assert context["percent"] == pytest.approx(220 / CONTEXT_WINDOW * 100)


async def test_fork_and_switch_back(rpc: Rpc) -> None:
    rpc.server.add(text_reply("one"), text_reply("two"), text_reply("two again"))
    client = await rpc.start()
    await client.prompt_and_wait("first")
    await client.prompt_and_wait("second")
    original = await client.get_state()
    points = await client.get_fork_messages()
    assert [p["text"] for p in points] == ["first", "second"]

    forked = await client.fork(points[1]["entryId"])
    assert forked == {"cancelled": False, "text": "second"}
    state = await client.get_state()
    assert (
        state["sessionFile"] != original["sessionFile"]
        and state["sessionId"] != original["sessionId"]
    )
    assert roles(await client.get_messages()) == ["user", "assistant"]
    await client.prompt_and_wait("second, differently")
    fork_lines = rpc.session_lines(state["sessionFile"])
    assert fork_lines[0]["parentSession"] == original["sessionFile"]
    assert [t for t in message_texts(fork_lines)] == [
        ("user", "first"),
        ("assistant", "one"),
        ("user", "second, differently"),
        ("assistant", "two again"),
    ]

    assert await client.switch_session(original["sessionFile"]) is False
    back = await client.get_state()
    assert (back["sessionFile"], back["sessionId"], back["messageCount"]) == (
        original["sessionFile"],
        original["sessionId"],
        4,
    )
    assert await client.get_last_assistant_text() == "two"
    with pytest.raises(RpcError, match="Invalid entry ID for forking"):
        await client.fork("no-such-entry")
    with pytest.raises(RpcError, match="Session file not found"):
        await client.switch_session(str(rpc.project / "missing.jsonl"))


async def test_new_session_and_clone(rpc: Rpc) -> None:
    rpc.server.add(text_reply("hello"), text_reply("fresh"))
    client = await rpc.start()
    await client.prompt_and_wait("hi")
    first = await client.get_state()

    assert await client.clone() is False
    cloned = await client.get_state()
    assert cloned["sessionFile"] != first["sessionFile"] and cloned["messageCount"] == 2
    clone_lines = rpc.session_lines(cloned["sessionFile"])
    assert message_texts(clone_lines) == [("user", "hi"), ("assistant", "hello")]

    mark = client.mark()
    assert await client.new_session() is False
    fresh = await client.get_state()
    assert fresh["messageCount"] == 0 and fresh["sessionId"] not in (
        first["sessionId"],
        cloned["sessionId"],
    )
    await client.prompt_and_wait("again")
    lines = rpc.session_lines(fresh["sessionFile"])
    assert [e["type"] for e in lines[:3]] == ["session", "model_change", "thinking_level_change"]
    assert message_texts(lines) == [("user", "again"), ("assistant", "fresh")]
    # The model saw only the new session's conversation.
    assert [m["role"] for m in rpc.server.requests[-1].body["messages"]] == ["system", "user"]
    assert client.history[mark:]  # new_session itself emits nothing, the prompt did


async def test_session_name(rpc: Rpc) -> None:
    rpc.server.add(text_reply("ok"))
    client = await rpc.start()
    await client.prompt_and_wait("hi")
    mark = client.mark()
    await client.set_session_name("  my work  ")
    assert (await client.get_state())["sessionName"] == "my work"
    assert await client.wait_for(is_type("session_info_changed"), since=mark) == {
        "type": "session_info_changed",
        "name": "my work",
    }
    with pytest.raises(RpcError, match="Session name cannot be empty"):
        await client.set_session_name("   ")
    lines = rpc.session_lines((await client.get_state())["sessionFile"])
    assert [e["name"] for e in lines if e["type"] == "session_info"] == ["my work"]


async def test_export_html_is_standalone_and_escaped(rpc: Rpc) -> None:
    hostile = "<script>alert('x')</script> & \"quotes\""
    rpc.server.add(
        tool_call_reply([tool_call("c1", "ls", {"path": "."})], text="<b>not bold</b>"),
        text_reply(hostile),
    )
    client = await rpc.start()
    await client.prompt_and_wait("show <img src=x onerror=alert(1)>")
    await client.set_session_name("Demo <session>")
    path = Path(await client.export_html())
    assert (
        path.parent == rpc.project
        and path.name.startswith("knightcode-session-")
        and path.suffix == ".html"
    )
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<title>Demo &lt;session&gt;</title>" in page
    # assistant text is markdown (markdown-it escapes &, <, > and ")
    assert "&lt;script&gt;alert('x')&lt;/script&gt; &amp; &quot;quotes&quot;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&lt;b&gt;not bold&lt;/b&gt;" in page
    assert page.count("<script") == 1  # the viewer's own, allowed by its hash
    assert "<img" not in page and "<b>" not in page
    assert "tool call · ls" in page  # the tool call is shown
    assert "http:" not in page and "https:" not in page  # no external resources
    target = rpc.project / "out" / "t.html"
    assert await client.export_html(str(target)) == str(target) and target.is_file()


async def test_export_html_and_the_cli_export_write_the_same_bytes(rpc: Rpc) -> None:
    import asyncio
    import os
    import sys

    rpc.server.add(
        tool_call_reply([tool_call("c1", "ls", {"path": "."})], text="Looking"),
        text_reply("Here it is:\n\n```python\nprint(1)\n```"),
    )
    client = await rpc.start()
    await client.prompt_and_wait("list files")
    session_file = (await client.get_state())["sessionFile"]
    from_rpc = Path(await client.export_html("rpc.html")).read_bytes()
    await client.close(timeout=10)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "knightcode",
        "--export",
        session_file,
        "cli.html",
        cwd=rpc.project,
        env={**os.environ, "KNIGHTCODE_LOAD_PLUGINS": ""},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    assert out.decode() == f"Exported to: {rpc.project / 'cli.html'}\n"
    assert (rpc.project / "cli.html").read_bytes() == from_rpc


HOOKS_PLUGIN = """
from knightcode import hookimpl

LOG = []


@hookimpl
def session_before_switch(reason, target_session_file, ctx):
    ctx.ui.notify(f"before_switch {reason} {target_session_file is not None}")
    if ctx.session.session_name == "locked":
        return {"cancel": True}


@hookimpl
def session_before_fork(entry_id, position, ctx):
    ctx.ui.notify(f"before_fork {position}")
    if ctx.session.session_name == "locked":
        return {"cancel": True}


@hookimpl
def session_shutdown(reason, ctx):
    ctx.ui.notify(f"shutdown {reason} {ctx.session.session_id}")


@hookimpl
def session_start(reason, previous_session_file, ctx):
    ctx.ui.notify(f"start {reason} {ctx.session.session_id} {previous_session_file is not None}")
"""


async def test_session_hooks_order_and_cancel(rpc: Rpc) -> None:
    rpc.server.add(text_reply("one"))
    client = await rpc.start("-e", str(rpc.plugin("session_hooks", HOOKS_PLUGIN)))
    await client.wait_for(lambda r: r.get("message", "").startswith("start startup"))
    await client.prompt_and_wait("hi")
    first = (await client.get_state())["sessionId"]

    def notices(mark: int) -> list[str]:
        return [r["message"] for r in client.history[mark:] if r.get("method") == "notify"]

    mark = client.mark()
    assert await client.clone() is False
    cloned = (await client.get_state())["sessionId"]
    assert notices(mark) == [
        "before_fork at",
        f"shutdown fork {first}",
        f"start fork {cloned} True",
    ]

    mark = client.mark()
    assert await client.new_session() is False
    fresh = (await client.get_state())["sessionId"]
    assert notices(mark) == [
        "before_switch new False",
        f"shutdown new {cloned}",
        f"start new {fresh} True",
    ]

    await client.set_session_name("locked")
    mark = client.mark()
    assert await client.new_session() is True
    assert await client.clone() is True
    assert (await client.get_state())["sessionId"] == fresh  # nothing changed
    assert notices(mark) == ["before_switch new False", "before_fork at"]
