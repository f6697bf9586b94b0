"""Flush what the plugin keeps in memory when the session is left."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from knightcode import HookContext, hookimpl

SEEN: dict[str, int] = {}
"""Filled by the plugin's other handlers."""


@hookimpl
def session_shutdown(
    reason: Literal["quit", "reload", "new", "resume", "fork"],
    target_session_file: Path | None,
    ctx: HookContext,
) -> None:
    """Write the counts into the agent directory."""
    if SEEN:
        (ctx.agent_dir / "seen.json").write_text(json.dumps(SEEN), encoding="utf-8")
        SEEN.clear()
