"""Shared helpers for the tool tests."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from knightcode._tools import ToolContext, create_builtin_tools

TOOLS = create_builtin_tools()


async def run(
    name: str, args: dict[str, Any], ctx: ToolContext, on_update: Any = None
) -> dict[str, Any]:
    """Execute the built-in tool ``name`` the way the agent does."""
    result: dict[str, Any] = await TOOLS[name].execute("call-1", args, ctx, on_update)
    return result


def text_of(result: dict[str, Any]) -> str:
    """The text blocks of a result joined by newlines (the reference tests' getTextOutput)."""
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def write(path: Path, content: str | bytes) -> Path:
    """Write a test file, creating parents; bytes are written as they are."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def is_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie counts as gone)."""
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.exists() and Path("/proc/self").exists():
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            return False
        return fields[0] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
