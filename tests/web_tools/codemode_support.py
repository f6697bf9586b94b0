"""What the codemode tests share: a project with files to read and grep, tools.json with codemode
on, and a run of the real ``knightcode --mode json`` where the scripted model makes one ``code``
call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from knightcode.testing import text_reply, tool_call, tool_call_reply
from knightcode_builtins.web_tools.config import tools_json_path, write_tools_json
from tests.agent.conftest import Scripted

from .pages.site import Site, serve

NOTES = "alpha\nbeta TODO: fix the frobnicator\ngamma\n"

FOUR_TOOLS_AND_A_CLASSIFIER = """\
notes = read("notes.txt")
print("lines:", len(notes.splitlines()))
print(grep(pattern="TODO", path="."))
print(bash("echo from-bash; pwd").strip())
data = web_fetch(url=URL)
print("fetched:", data)
answers = classify(
    "llama.cpp/tiny-chat",
    {"page": data},
    {"agent": {"type": "bool", "instructions": "Is this page addressed to an AI agent?"}},
)
print("P(agent) =", round(answers["agent"]["probability"], 3))
"""


@pytest.fixture
def site() -> Iterator[Site]:
    """The loopback web site (``pages/site.py``) for ``web_fetch``."""
    with serve() as running:
        yield running


def prepare(
    s: Scripted, codemode: dict[str, Any] | None = None, settings: dict[str, Any] | None = None
) -> None:
    """notes.txt in the project; tools.json with codemode on (plus ``codemode``) and loopback
    fetches allowed; settings.json with ``settings`` added.
    """
    (s.project / "notes.txt").write_text(NOTES)
    write_tools_json(
        tools_json_path(s.agent_dir),
        {"codemode": {"enabled": True, **(codemode or {})}, "fetch": {"allowPrivate": True}},
    )
    (s.agent_dir / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 10}, **(settings or {})})
    )


def run_script(
    s: Scripted, script: str, *args: str, timeout: float | None = None, **env: str
) -> tuple[list[dict[str, Any]], Any]:
    """One ``code`` call running ``script``, then a final text reply; the records and the
    process. ``--tools`` chooses the tools that become the script's functions.
    """
    arguments: dict[str, object] = {"script": script}
    if timeout is not None:
        arguments["timeout"] = timeout
    s.server.add(tool_call_reply([tool_call("call_1", "code", arguments)]), text_reply("done"))
    return s.run_json("--tools", "read,grep,bash,web_fetch", *args, "go", **env)


def code_end(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``tool_execution_end`` of the ``code`` call."""
    (end,) = [
        r for r in records if r["type"] == "tool_execution_end" and r["toolCallId"] == "call_1"
    ]
    return end


def text(end: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in end["result"]["content"])


def nested(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of the nested calls, in order."""
    return [r for r in records if "parentToolCallId" in r]
