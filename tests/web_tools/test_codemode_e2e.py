"""Codemode end to end in ``--mode json``: the real executable against the scripted model server;
the exact records of a ``code`` call whose script calls ``read``, ``grep`` and ``bash`` — each a
nested tool execution carrying ``parentToolCallId`` — and the one ``toolResult`` it produces.
"""

from __future__ import annotations

from typing import Any

from tests.agent.conftest import Scripted, scripted  # noqa: F401 (the fixture)
from tests.harness import types_of

from .codemode_support import prepare, run_script

SCRIPT = "print(read('notes.txt', limit=1))\nprint(grep('TODO'))\nprint(bash('echo hi'))\n"
ARGS = {"script": SCRIPT}
OUTPUT = (
    "alpha\n\n[3 more lines in file. Use offset=2 to continue.]\n"
    "notes.txt:2: beta TODO: fix the frobnicator\n"
    "hi\n\n"
    "[exit status 0 · 3 calls: read, grep, bash]"
)
CALLS = [
    {"name": "read", "ok": True, "toolCallId": "call_1.1"},
    {"name": "grep", "ok": True, "toolCallId": "call_1.2"},
    {"name": "bash", "ok": True, "toolCallId": "call_1.3"},
]
DETAILS = {
    "exitCode": 0,
    "timedOut": False,
    "outputChars": 105,
    "truncated": False,
    "calls": CALLS,
}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def progress(marks: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``code`` call's partial result: the nested calls so far."""
    return {
        "type": "tool_execution_update",
        "toolCallId": "call_1",
        "toolName": "code",
        "args": ARGS,
        "partialResult": {"content": [text(marks)], "details": {"calls": calls}},
    }


def nested(kind: str, n: int, tool: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": f"tool_execution_{kind}",
        "toolCallId": f"call_1.{n}",
        "toolName": tool,
        **fields,
        "parentToolCallId": "call_1",
    }


EXPECTED = [
    {"type": "tool_execution_start", "toolCallId": "call_1", "toolName": "code", "args": ARGS},
    nested("start", 1, "read", args={"path": "notes.txt", "limit": 1}),
    progress("read …", [{"name": "read", "ok": None}]),
    nested(
        "end",
        1,
        "read",
        result={
            "content": [text("alpha\n\n[3 more lines in file. Use offset=2 to continue.]")],
            "details": None,
        },
        isError=False,
    ),
    nested("start", 2, "grep", args={"pattern": "TODO"}),
    progress("read ✓\ngrep …", [CALLS[0], {"name": "grep", "ok": None}]),
    nested(
        "end",
        2,
        "grep",
        result={"content": [text("notes.txt:2: beta TODO: fix the frobnicator")], "details": None},
        isError=False,
    ),
    nested("start", 3, "bash", args={"command": "echo hi"}),
    progress("read ✓\ngrep ✓\nbash …", [*CALLS[:2], {"name": "bash", "ok": None}]),
    nested(
        "update",
        3,
        "bash",
        args={"command": "echo hi"},
        partialResult={"content": [], "details": None},
    ),
    nested(
        "update",
        3,
        "bash",
        args={"command": "echo hi"},
        partialResult={"content": [text("hi\n")], "details": {}},
    ),
    nested("end", 3, "bash", result={"content": [text("hi\n")], "details": None}, isError=False),
    {
        "type": "tool_execution_end",
        "toolCallId": "call_1",
        "toolName": "code",
        "result": {"content": [text(OUTPUT)], "details": DETAILS},
        "isError": False,
    },
]


def test_nested_calls_in_the_json_stream(scripted: Scripted) -> None:  # noqa: F811
    prepare(scripted)
    records, result = run_script(scripted, SCRIPT)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert types_of(records) == [
        "session",
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_update:toolcall_start",
        "message_update:toolcall_delta",
        "message_update:toolcall_end",
        "message_end:assistant",
        *(record["type"] for record in EXPECTED),
        "message_start:toolResult",
        "message_end:toolResult",
        "turn_end",
        "turn_start",
        "message_start:assistant",
        "message_update:text_start",
        "message_update:text_delta",
        "message_update:text_end",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    executions = records[10 : 10 + len(EXPECTED)]
    for record in executions:
        if record["type"] == "tool_execution_end":
            assert isinstance(record.pop("durationMs"), float)
    assert executions == EXPECTED
    # one toolResult message, the code call's; the nested results went to the script only
    tool_result = records[10 + len(EXPECTED) + 1]["message"]
    assert tool_result["toolCallId"] == "call_1" and tool_result["content"] == [text(OUTPUT)]
    assert tool_result["details"] == DETAILS
    turn_end = next(r for r in records if r["type"] == "turn_end")
    assert [m["toolCallId"] for m in turn_end["toolResults"]] == ["call_1"]
    # the session file holds the same: no message for a nested call
    entries = scripted.session_entries()
    recorded = [e["message"] for e in entries if e.get("type") == "message"]
    assert [m["role"] for m in recorded] == ["user", "assistant", "toolResult", "assistant"]
    # what the model got back for its code call
    second = scripted.server.requests[1].body["messages"]
    assert second[-1] == {"role": "tool", "content": OUTPUT, "tool_call_id": "call_1"}
