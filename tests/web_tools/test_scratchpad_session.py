"""The scratchpad lives as long as its session: a session kept only in memory takes it along when
it is left (not on a reload), a saved one keeps it until the session is deleted.
"""

from __future__ import annotations

import json
from pathlib import Path

from knightcode.testing import text_reply, tool_call, tool_call_reply
from tests.harness import Builder, Run
from tests.web_tools.pages.site import serve


async def fetch_long_page(build: Builder, *, persist: bool) -> tuple[Run, Path]:
    """A session whose model fetched a page too long for the context; returns the saved file."""
    tools_json = {"fetch": {"allowPrivate": True}, "scratchpad": {"inlineChars": 500}}
    build.agent_dir.mkdir(parents=True, exist_ok=True)
    (build.agent_dir / "tools.json").write_text(json.dumps(tools_json))
    s = await build(persist=persist, builtin=["read", "web_fetch"])
    with serve() as site:
        s.server.add(
            tool_call_reply([tool_call("f1", "web_fetch", {"url": site.url("/long.txt")})]),
            text_reply("done"),
        )
        await s.agent.prompt("fetch it")
    (result,) = s.tool_results()
    saved = Path(result["details"]["scratchpad"])
    assert saved.is_file()
    return s, saved


async def test_an_in_memory_sessions_scratchpad_goes_when_it_is_left(build: Builder) -> None:
    s, saved = await fetch_long_page(build, persist=False)
    await s.host.hooks.session_shutdown(reason="reload", target_session_file=None)
    assert saved.is_file()  # a reload goes on with the same session
    await s.host.hooks.session_shutdown(reason="quit", target_session_file=None)
    assert not saved.parent.exists()


async def test_a_saved_sessions_scratchpad_stays_until_it_is_deleted(build: Builder) -> None:
    s, saved = await fetch_long_page(build, persist=True)
    session_file = s.agent.session.session_file
    assert session_file is not None and saved.parent.name == session_file.stem + ".scratchpad"
    await s.host.hooks.session_shutdown(reason="quit", target_session_file=None)
    assert saved.is_file()
    header = json.loads(session_file.read_text().split("\n", 1)[0])
    await s.host.hooks.session_delete(session_file=session_file, header=header)
    assert not saved.parent.exists()
