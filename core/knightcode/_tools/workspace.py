"""Writes outside the working directory: allowed, asked about, or refused.

Without a sandbox the built-in tools may touch any path the user can. Settings
``tools.outsideWorkspace`` keeps ``write`` and ``edit`` inside the working directory:
``"allow"`` (the default) lets them write anywhere, ``"ask"`` asks through the UI (the terminal,
or the RPC client's dialog) and refuses where nobody can answer (print and JSON modes),
``"refuse"`` refuses. A refusal is the tool's error result, so the model learns why.

Where a path lands is judged on the path resolved: ``~`` expanded, ``..`` collapsed and, on the
local backend, symbolic links followed — a dangling link too, since a write follows it and
creates its target. The working directory is resolved the same way. This is a guard against
mistakes, not a sandbox: ``bash`` can still write anywhere, and a link swapped between the check
and the write is not caught. Only a sandbox backend confines everything (``docs/tools.md``).
"""

from __future__ import annotations

import asyncio
import os
import posixpath
from typing import TYPE_CHECKING

from knightcode._tools.errors import ToolError

if TYPE_CHECKING:
    from knightcode._config.settings import OutsideWorkspace
    from knightcode._tools.context import ToolContext

__all__ = ["guard_outside_workspace", "is_inside"]

SETTING = "tools.outsideWorkspace"


async def guard_outside_workspace(ctx: ToolContext, path: str, absolute: str, verb: str) -> None:
    """Let a change of ``absolute`` (the model wrote ``path``) go ahead, or raise.

    :param verb: what the tool does, for the messages (``"write"``, ``"edit"``)
    :raises ToolError: the path is outside the working directory and the setting (or the user)
        says no; the message names the path, the directory and the setting
    :raises knightcode.Aborted: the call was aborted while the user was being asked
    """
    mode = _mode(ctx)
    if mode == "allow":
        return
    target, root = await _resolved(ctx, absolute)
    if is_inside(target, root):
        return
    shown = path if target == path else f"{path} (resolves to {target})"
    where = f"{shown}: it is outside the working directory {root}"
    if mode == "ask":
        if not ctx.has_ui:
            raise ToolError(
                f'Refused to {verb} {where}; settings {SETTING} is "ask" and nobody can be asked '
                "in this mode."
            )
        allowed = await ctx.signal.guard(
            ctx.ui.confirm(
                f"Allow {verb} outside the working directory?",
                f"{shown} is outside the working directory {root}.",
            )
        )
        if allowed:
            return
        raise ToolError(f'Refused to {verb} {where}; the user said no (settings {SETTING}: "ask").')
    raise ToolError(f'Refused to {verb} {where} (settings {SETTING} is "refuse").')


def is_inside(path: str, root: str) -> bool:
    """Whether the normalised absolute ``path`` is ``root`` or below it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _mode(ctx: ToolContext) -> OutsideWorkspace:
    if ctx.context is None:  # a tool run outside a session (tests, scripts): no settings
        return "allow"
    return ctx.context.settings.model.tools.outside_workspace


async def _resolved(ctx: ToolContext, absolute: str) -> tuple[str, str]:
    """``(target, working directory)``, links followed on the local backend; lexically
    normalised on others, whose filesystem this process cannot see.
    """
    from knightcode._tools.local_backend import LocalBackend

    cwd = os.fspath(ctx.cwd)
    if isinstance(ctx.backend, LocalBackend):
        return await asyncio.to_thread(lambda: (os.path.realpath(absolute), os.path.realpath(cwd)))
    return posixpath.normpath(absolute), posixpath.normpath(cwd)
