"""The ``ls`` tool: one directory's entries, sorted, with ``/`` after directories."""

from __future__ import annotations

from typing import TypedDict

from knightcode._plugins.definitions import ToolDefinition
from knightcode._tools.context import ToolContext
from knightcode._tools.errors import ToolError
from knightcode._tools.path_utils import resolve_to_cwd
from knightcode._tools.results import OnUpdate, ToolResult, raise_if_aborted, text_result, to_int
from knightcode._tools.truncate import (
    DEFAULT_MAX_BYTES,
    TruncationDetails,
    format_size,
    truncate_head,
)

__all__ = ["DEFAULT_LS_LIMIT", "create_ls_tool"]

DEFAULT_LS_LIMIT = 500


class LsDetails(TypedDict, total=False):
    """``details`` of an ls result that was cut short."""

    entryLimitReached: int
    truncation: TruncationDetails


LS_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Directory to list (default: the working directory)",
        },
        "limit": {
            "type": "number",
            "description": f"Stop after this many entries (default: {DEFAULT_LS_LIMIT})",
        },
    },
}


async def execute_ls(
    tool_call_id: str, args: dict[str, object], ctx: ToolContext, on_update: OnUpdate = None
) -> ToolResult:
    """Run the ls tool (see :func:`create_ls_tool`)."""
    raise_if_aborted(ctx)
    backend = ctx.backend
    directory = resolve_to_cwd(str(args.get("path") or "."), ctx.cwd, backend.home())
    limit = to_int(args.get("limit"), DEFAULT_LS_LIMIT)
    info = await backend.stat(directory)
    if info is None:
        raise ToolError(f"Path not found: {directory}")
    if not info.is_dir:
        raise ToolError(f"Not a directory: {directory}")
    try:
        entries = await backend.list_dir(directory)
    except OSError as error:
        raise ToolError(f"Cannot read directory: {error.strerror or error}") from error
    raise_if_aborted(ctx)
    # Case-insensitive order; entries equal ignoring case keep the listing's order (stable sort).
    entries.sort(key=lambda entry: entry.name.lower())
    shown = [entry.name + ("/" if entry.is_dir else "") for entry in entries[: max(0, limit)]]
    limit_reached = len(entries) > len(shown)
    if not shown:
        return text_result("(empty directory)")
    truncation = truncate_head("\n".join(shown), max_lines=2**62)
    output = truncation.content
    details: LsDetails = {}
    notices = []
    if limit_reached:
        notices.append(f"{limit} entries limit reached. Use limit={limit * 2} for more")
        details["entryLimitReached"] = limit
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation.to_details()
    if notices:
        output += f"\n\n[{'. '.join(notices)}]"
    return text_result(output, details or None)


def create_ls_tool() -> ToolDefinition:
    """The ``ls`` tool definition."""
    return ToolDefinition(
        name="ls",
        label="ls",
        description=(
            "List a directory: entries in alphabetical order, dotfiles included, directories "
            f"marked with a trailing '/'. At most {DEFAULT_LS_LIMIT} entries or "
            f"{DEFAULT_MAX_BYTES // 1024}KB are returned (whichever comes first)."
        ),
        parameters=LS_PARAMETERS,
        execute=execute_ls,
        prompt_snippet="List the entries of a directory",
    )
