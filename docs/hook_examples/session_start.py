"""Say where a forked session came from."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from knightcode import HookContext, hookimpl


@hookimpl
def session_start(
    reason: Literal["startup", "reload", "new", "resume", "fork"],
    previous_session_file: Path | None,
    ctx: HookContext,
) -> None:
    """Notify after a fork."""
    if reason == "fork" and previous_session_file is not None:
        ctx.ui.notify(f"Forked from {previous_session_file.name}")
