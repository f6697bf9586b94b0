"""Remove the notes the plugin kept for a session when the user deletes it."""

from __future__ import annotations

import re
from pathlib import Path

from knightcode import HookContext, SessionHeader, hookimpl

PLAIN_ID = re.compile(r"[A-Za-z0-9_-]+")


@hookimpl
def session_delete(session_file: Path, header: SessionHeader | None, ctx: HookContext) -> None:
    """The notes are ``<agent dir>/notes/<session id>.md``; the id is checked before use."""
    session_id = header.get("id") if header is not None else None
    if isinstance(session_id, str) and PLAIN_ID.fullmatch(session_id):
        (ctx.agent_dir / "notes" / f"{session_id}.md").unlink(missing_ok=True)
