"""Session files for the export tests and the export bench, written through the real store."""

from __future__ import annotations

from pathlib import Path

from knightcode._session.manager import SessionManager

from ..session.helpers import USAGE

HOSTILE = "</script><script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3))"
"""Assistant text that would run script if anything reached the page unescaped."""

LONG_OUTPUT = "\n".join(f"line {n}" for n in range(1, 41))


def assistant(content: list[dict[str, object]], stop: str = "stop") -> dict[str, object]:
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "scripted",
        "model": "m1",
        "usage": USAGE,
        "stopReason": stop,
        "timestamp": 1,
    }


def user(text: str) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def tool_result(call_id: str, name: str, text: str, **extra: object) -> dict[str, object]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 1,
        **extra,
    }


def call(call_id: str, name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def write_demo_session(cwd: Path, session_dir: Path) -> tuple[SessionManager, dict[str, str]]:
    """A session with every entry kind and two branches; returns it and some entry ids."""
    session = SessionManager.create(cwd, session_dir)
    ids: dict[str, str] = {}
    ids["first"] = session.append_message(user("Please look at main.py"))
    session.append_model_change("scripted", "m1")
    session.append_message(
        assistant(
            [
                {"type": "thinking", "thinking": "I should read the file first."},
                {"type": "text", "text": "Reading it.\n\n```python\nprint('hi')\n```"},
                call("c1", "read", {"path": "main.py"}),
                call("c2", "bash", {"command": "ls -la"}),
            ],
            stop="toolUse",
        )
    )
    session.append_message(tool_result("c1", "read", "def main():\n    return 42\n"))
    session.append_message(tool_result("c2", "bash", LONG_OUTPUT))
    ids["fork"] = session.append_message(assistant([{"type": "text", "text": "**Done** here."}]))
    ids["old_branch"] = session.append_message(user("abandoned branch question"))
    session.append_message(assistant([{"type": "text", "text": "abandoned answer"}]))
    session.branch(ids["fork"])
    session.append_branch_summary("The user tried something else first.", ids["old_branch"])
    session.append_message(user("now edit it"))
    session.append_message(
        assistant(
            [
                call(
                    "c3", "edit", {"path": "main.py", "edits": [{"oldText": "42", "newText": "43"}]}
                ),
                call("c4", "write", {"path": "notes.md", "content": "# Notes\n"}),
            ],
            stop="toolUse",
        )
    )
    session.append_message(
        tool_result(
            "c3",
            "edit",
            "Successfully replaced 1 block(s) in main.py.",
            details={"diff": "-2     return 42\n+2     return 43"},
        )
    )
    session.append_message(tool_result("c4", "write", "Wrote notes.md"))
    session.append_compaction("Summary of the work so far: main.py edited.", None, 1234)
    session.append_message(assistant([{"type": "text", "text": HOSTILE}]))
    ids["leaf"] = session.leaf_id or ""
    session.close()
    return session, ids
