"""The ``write`` tool: create or overwrite a file, creating parent directories."""

from __future__ import annotations

from knightcode._plugins.definitions import ToolDefinition
from knightcode._tools.context import ToolContext
from knightcode._tools.errors import ToolError
from knightcode._tools.file_locks import file_mutation_lock
from knightcode._tools.path_utils import resolve_to_cwd
from knightcode._tools.results import (
    OnUpdate,
    ToolResult,
    encode_utf8,
    os_error_text,
    raise_if_aborted,
    text_result,
)
from knightcode._tools.workspace import guard_outside_workspace

__all__ = ["create_write_tool", "utf16_length"]

WRITE_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File to write, relative to the working directory or absolute",
        },
        "content": {"type": "string", "description": "The complete new content of the file"},
    },
    "required": ["path", "content"],
}


def utf16_length(text: str) -> int:
    """JavaScript's ``string.length``: UTF-16 code units. The reference reports this number as
    "bytes" in its success message, and we keep the same text.
    """
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


async def execute_write(
    tool_call_id: str, args: dict[str, object], ctx: ToolContext, on_update: OnUpdate = None
) -> ToolResult:
    """Run the write tool (see :func:`create_write_tool`)."""
    path = str(args["path"])
    content = str(args["content"])
    absolute = resolve_to_cwd(path, ctx.cwd, ctx.backend.home())
    await guard_outside_workspace(ctx, path, absolute, "write")
    async with file_mutation_lock(absolute):
        raise_if_aborted(ctx)
        try:
            await ctx.backend.write_file(absolute, encode_utf8(content))
        except OSError as error:
            raise ToolError(os_error_text(error, "open", absolute)) from error
        raise_if_aborted(ctx)
    return text_result(f"Successfully wrote {utf16_length(content)} bytes to {path}")


def create_write_tool() -> ToolDefinition:
    """The ``write`` tool definition."""
    return ToolDefinition(
        name="write",
        label="write",
        description=(
            "Write a file with the given content, replacing it if it exists and creating it and "
            "any missing parent directories if not."
        ),
        parameters=WRITE_PARAMETERS,
        execute=execute_write,
        prompt_snippet="Create files or overwrite them completely",
        prompt_guidelines=(
            "Use write for new files and full rewrites only; use edit for changes.",
        ),
    )
