"""An example folder extension: an audit log of every tool the agent runs.

A folder with ``__init__.py`` is one extension; its modules import each other relatively. Each
finished tool call becomes one JSON line in ``<agent-dir>/audit.jsonl`` (or the file named by
the ``--audit-log`` flag). Load it with ``knightcode -e plugins_examples/audit_log``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from knightcode import HookContext, hookimpl

from .writer import AuditWriter


def _writer(ctx: HookContext) -> AuditWriter:
    chosen = ctx.flags["audit-log"]
    return AuditWriter(Path(str(chosen)) if chosen else ctx.agent_dir / "audit.jsonl")


@hookimpl
def register_flags(register: Callable[..., None]) -> None:
    """``--audit-log FILE``."""
    register(name="audit-log", type="string", description="Write the tool audit log to this file.")


@hookimpl
def session_start(reason: str, ctx: HookContext) -> None:
    """Record where and why a session started."""
    _writer(ctx).write({"event": "session_start", "reason": reason, "cwd": str(ctx.cwd)})


@hookimpl
async def tool_execution_end(
    tool_call_id: str, tool_name: str, is_error: bool, ctx: HookContext
) -> None:
    """Record every finished tool call."""
    _writer(ctx).write({"event": "tool", "id": tool_call_id, "tool": tool_name, "error": is_error})
