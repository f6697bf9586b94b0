"""An example folder extension: an audit log of every tool the agent runs.

A folder with ``__init__.py`` is one extension; its modules import each other relatively. Each
finished tool call becomes one JSON line in ``<agent-dir>/audit.jsonl`` (or the file named by
the ``--audit-log`` flag). Load it with ``knightcode -e plugins_examples/audit_log``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knightcode import hookimpl

from .writer import AuditWriter


def _writer(ctx: Any) -> AuditWriter:
    chosen = ctx.host.flag_value("audit-log") if ctx.host is not None else None
    return AuditWriter(Path(chosen) if chosen else Path(ctx.agent_dir) / "audit.jsonl")


@hookimpl
def register_flags(register: Any) -> None:
    register(name="audit-log", type="string", description="Write the tool audit log to this file.")


@hookimpl
def session_start(reason: str, ctx: Any) -> None:
    _writer(ctx).write({"event": "session_start", "reason": reason, "cwd": str(ctx.cwd)})


@hookimpl
async def tool_execution_end(tool_call_id: str, tool_name: str, is_error: bool, ctx: Any) -> None:
    _writer(ctx).write({"event": "tool", "id": tool_call_id, "tool": tool_name, "error": is_error})
