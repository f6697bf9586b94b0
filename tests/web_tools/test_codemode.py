"""Codemode through the real executable: one ``code`` step that calls four tools and a classifier
(a real llama-server with a tiny model, a loopback page), on this machine and inside the bwrap
sandbox, and the ways a script ends badly — killed at its timeout, output cut, a traceback, a
blocked call, a tool it may not call.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from knightcode.testing import text_reply
from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)
from tests.llama_cpp.routers import KEY
from tests.llama_cpp.servers import LlamaServer
from tests.sandbox.conftest import factory

from .codemode_support import (
    FOUR_TOOLS_AND_A_CLASSIFIER,
    code_end,
    nested,
    prepare,
    run_script,
    site,  # noqa: F401 (the fixture)
    text,
)
from .pages.site import Site


@pytest.mark.parametrize("backend", ["local", "bwrap"])
def test_four_tools_and_a_classifier_in_one_step(
    scripted: Scripted,  # noqa: F811
    site: Site,  # noqa: F811
    router: LlamaServer,
    tmp_path: Path,
    backend: str,
) -> None:
    """The issue's case, on this machine and inside the bwrap sandbox (bwrap must be installed:
    CI fails without it, elsewhere the case is skipped with the reason, ``tests/sandbox``).
    """
    sandboxed = backend != "local"
    if sandboxed:
        factory(backend)
    router.ensure({"tiny-chat"})
    prepare(scripted, settings={"sandbox": {"backend": backend}} if sandboxed else None)
    outside = tmp_path / f"outside-{secrets.token_hex(4)}"
    outside.mkdir()
    script = (
        f"URL = {site.url('/data.json')!r}\n" + FOUR_TOOLS_AND_A_CLASSIFIER + "import os\n"
        f"print('host folder visible:', os.path.exists({str(outside)!r}))\n"
        "print('script cwd:', os.getcwd())\n"
    )
    args = ("--sandbox", backend) if sandboxed else ()
    records, result = run_script(
        scripted, script, *args, LLAMA_BASE_URL=router.url, LLAMA_API_KEY=KEY
    )
    assert result.returncode == 0, result.stderr
    end = code_end(records)
    assert end["isError"] is False, text(end)
    output = text(end)
    cwd = "/workspace" if sandboxed else str(scripted.project)
    assert "lines: 3" in output
    assert "notes.txt:2: beta TODO: fix the frobnicator" in output
    assert f"from-bash\n{cwd}" in output  # bash ran inside the sandbox, when there is one
    assert 'Content-Type: application/json\n\n{"answer": 42, "items": [1, 2]}' in output
    # tiny-chat's next token is Yes .12 / No .03 whatever the prompt: P(yes) = .8
    assert "P(agent) = 0.8" in output
    # the script itself runs behind the boundary: /workspace, not the host's folders
    assert f"host folder visible: {not sandboxed}" in output
    assert f"script cwd: {cwd}" in output
    assert output.endswith(
        "[exit status 0 · 5 calls: read, grep, bash, web_fetch, classify(llama.cpp/tiny-chat)]"
    )
    # the four tool calls are nested executions of call_1; classify is not a tool
    starts = [r for r in nested(records) if r["type"] == "tool_execution_start"]
    assert [(r["toolCallId"], r["toolName"], r["parentToolCallId"]) for r in starts] == [
        ("call_1.1", "read", "call_1"),
        ("call_1.2", "grep", "call_1"),
        ("call_1.3", "bash", "call_1"),
        ("call_1.4", "web_fetch", "call_1"),
    ]
    assert end["result"]["details"]["calls"][-1] == {
        "name": "classify(llama.cpp/tiny-chat)",
        "ok": True,
    }
    # the model was offered only `code`; the system prompt lists the functions
    first = scripted.server.requests[0].body
    assert [tool["function"]["name"] for tool in first["tools"]] == ["code"]
    system = first["messages"][0]["content"]
    assert "## Codemode functions" in system
    assert "read(path, offset=None, limit=None)" in system
    assert "web_fetch(url, raw=None)" in system and "classify(model, state, questions" in system
    # one toolResult (the code call's)
    results = [
        r["message"]
        for r in records
        if r["type"] == "message_end" and r["message"]["role"] == "toolResult"
    ]
    assert [m["toolCallId"] for m in results] == ["call_1"]
    # under the sandbox the channel lived in the workspace (git-ignored), and was removed
    channels = scripted.project / ".knightcode" / "codemode"
    assert channels.is_dir() == sandboxed
    if sandboxed:
        assert [entry.name for entry in channels.iterdir()] == [".gitignore"]
        assert (channels / ".gitignore").read_text() == "*\n"


def test_a_script_over_its_timeout_is_killed(scripted: Scripted) -> None:  # noqa: F811
    prepare(scripted)
    script = "print('started', flush=True)\nimport time\ntime.sleep(30)\nprint('never')"
    records, result = run_script(scripted, script, timeout=1)
    assert result.returncode == 0, result.stderr
    end = code_end(records)
    assert end["isError"] is True
    assert text(end).startswith("started\n")
    assert "never" not in text(end)
    assert "[killed after 1 s: the script ran longer than its timeout" in text(end)
    assert end["result"]["details"]["timedOut"] is True
    assert end["durationMs"] < 10_000


def test_output_over_the_limit_is_cut_in_the_middle(scripted: Scripted) -> None:  # noqa: F811
    prepare(scripted, {"maxOutputChars": 1000})
    script = "print('FIRST')\nfor n in range(5000):\n    print(f'line {n:05d}')\nprint('LAST')"
    records, _ = run_script(scripted, script)
    end = code_end(records)
    output = text(end)
    assert end["isError"] is False
    assert output.startswith("FIRST\nline 00000\n") and "LAST\n" in output
    # 6 + 5000 * 11 + 5 characters printed; 54,011 of them cut between the two halves
    assert (
        "[… 54,011 characters of output cut here: 55,011 in all, more than the 1,000 shown"
        in output
    )
    assert len(output) < 1500
    assert end["result"]["details"]["truncated"] is True
    assert end["result"]["details"]["outputChars"] == 55_011


def test_a_traceback_is_the_error_text(scripted: Scripted) -> None:  # noqa: F811
    prepare(scripted)
    script = "print('before')\ndef go():\n    return 1 / 0\ngo()\n"
    records, _ = run_script(scripted, script)
    end = code_end(records)
    assert end["isError"] is True
    assert text(end) == (
        "before\n"
        "Traceback (most recent call last):\n"
        '  File "<script>", line 4, in <module>\n'
        "    go()\n"
        '  File "<script>", line 3, in go\n'
        "    return 1 / 0\n"
        "           ~~^~~\n"
        "ZeroDivisionError: division by zero\n"
        "\n[exit status 1 · no tool calls]"
    )
    assert end["result"]["details"]["exitCode"] == 1


BLOCKER = """\
from knightcode import Block, hookimpl


@hookimpl
def tool_call(tool_call_id, tool_name, input, ctx):
    if tool_name == "bash" and "rm " in input.get("command", ""):
        return Block(reason=f"blocked {tool_call_id}: no rm here")
    return None
"""


def test_a_blocked_nested_call_raises_in_the_script(
    scripted: Scripted,  # noqa: F811
    tmp_path: Path,
) -> None:
    prepare(scripted)
    extension = tmp_path / "blocker.py"
    extension.write_text(BLOCKER)
    script = (
        "try:\n"
        "    bash('rm -rf build')\n"
        "except ToolError as error:\n"
        "    print('refused:', error, '|', error.tool)\n"
        "print(bash('echo allowed').strip())\n"
        "bash('rm notes.txt')\n"
    )
    records, result = run_script(scripted, script, "-e", str(extension))
    assert result.returncode == 0, result.stderr
    end = code_end(records)
    assert end["isError"] is True
    output = text(end)
    assert output.startswith("refused: blocked call_1.1: no rm here | bash\nallowed\n")
    assert "ToolError: blocked call_1.3: no rm here" in output
    assert output.endswith("[exit status 1 · 3 calls: bash (failed), bash, bash (failed)]")
    assert (scripted.project / "notes.txt").exists()
    ends = [r for r in nested(records) if r["type"] == "tool_execution_end"]
    assert [(r["toolCallId"], r["isError"]) for r in ends] == [
        ("call_1.1", True),
        ("call_1.2", False),
        ("call_1.3", True),
    ]


def test_only_the_tools_that_were_active_can_be_called(
    scripted: Scripted,  # noqa: F811
) -> None:
    prepare(scripted)
    script = (
        "for name in ('ls', 'code'):\n"
        "    try:\n"
        "        call_tool(name, path='.')\n"
        "    except ToolError as error:\n"
        "        print(error)\n"
        "print(sorted(tools))\n"
        "help(read)\n"
        "import os, stat\n"
        "channel = call_tool.__globals__['_channel'].directory\n"
        "print('channel', oct(stat.S_IMODE(os.stat(channel).st_mode)), channel)\n"
    )
    records, _ = run_script(scripted, script)
    end = code_end(records)
    output = text(end)
    assert end["isError"] is False, output
    callable_ = "callable: bash, grep, read, web_fetch"
    assert f"'ls' cannot be called from a script ({callable_})" in output
    assert f"'code' cannot be called from a script ({callable_})" in output
    assert "['bash', 'grep', 'read', 'web_fetch']" in output
    assert "read(path, offset=None, limit=None)" in output  # help() shows the signature
    assert nested(records) == []
    # the channel was private (0700, a random name) and is gone after the run
    mode, channel = output.split("channel ", 1)[1].split("\n", 1)[0].split(" ", 1)
    assert mode == "0o700" and Path(channel).name.startswith("knightcode-code-")
    assert not Path(channel).exists()


def test_codemode_off_offers_no_code_tool(scripted: Scripted) -> None:  # noqa: F811
    prepare(scripted, {"enabled": False})
    scripted.server.add(text_reply("hi"))
    _, result = scripted.run_json("hello")
    assert result.returncode == 0, result.stderr
    offered = [tool["function"]["name"] for tool in scripted.server.requests[0].body["tools"]]
    assert "code" not in offered and "read" in offered
    # --codemode switches it on for one run
    scripted.server.add(text_reply("hi"))
    _, result = scripted.run_json("--codemode", "hello")
    assert result.returncode == 0, result.stderr
    offered = [tool["function"]["name"] for tool in scripted.server.requests[1].body["tools"]]
    assert offered == ["code"]
    # so does --tools naming it, without codemode: then beside the others
    scripted.server.add(text_reply("hi"))
    _, result = scripted.run_json("--tools", "read,code", "hello")
    assert result.returncode == 0, result.stderr
    offered = [tool["function"]["name"] for tool in scripted.server.requests[2].body["tools"]]
    assert offered == ["read", "code"]
    # `knightcode tools list` says it is off
    listed = subprocess.run(
        [sys.executable, "-m", "knightcode", "tools", "list", "--json"],
        cwd=scripted.project,
        env=scripted.env(),
        capture_output=True,
        text=True,
        check=True,
    )
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["code"] == {"name": "code", "origin": "builtin:web-tools", "enabled": False}


def test_a_missing_interpreter_is_a_clear_error(scripted: Scripted) -> None:  # noqa: F811
    prepare(scripted, {"python": "no-such-python3"})
    records, _ = run_script(scripted, "print(1)")
    end = code_end(records)
    assert end["isError"] is True
    assert text(end).startswith("codemode: 'no-such-python3' was not found where the tools run")
