"""The ``read`` tool: a text file with offset/limit and head truncation, or an image."""

from __future__ import annotations

import base64

from knightcode._plugins.definitions import ToolDefinition
from knightcode._tools.context import ToolContext
from knightcode._tools.errors import ToolError
from knightcode._tools.image_info import SNIFF_BYTES, detect_image_mime, image_dimensions
from knightcode._tools.path_utils import resolve_read_path
from knightcode._tools.results import (
    OnUpdate,
    ToolResult,
    js_number,
    os_error_text,
    raise_if_aborted,
    text_result,
    to_int,
)
from knightcode._tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncate_head,
    utf8_len,
)
from knightcode._types.messages import ImageContent, TextContent

__all__ = ["IMAGE_MAX_BASE64_BYTES", "IMAGE_MAX_DIMENSION", "create_read_tool"]

IMAGE_MAX_DIMENSION = 2000
# Base64 payload ceiling, below Anthropic's 5 MB per-image limit (the reference's figure).
IMAGE_MAX_BASE64_BYTES = int(4.5 * 1024 * 1024)

READ_PARAMETERS: dict[str, object] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File to read, relative to the working directory or absolute",
        },
        "offset": {"type": "number", "description": "First line to return, counting from 1"},
        "limit": {"type": "number", "description": "How many lines to return at most"},
    },
    "required": ["path"],
}


def _image_result(data: bytes, mime: str) -> ToolResult:
    note = f"Read image file [{mime}]"
    encoded = base64.b64encode(data).decode("ascii")
    # knightcode cannot resize images (no imaging library); a payload the providers would refuse
    # is left out with the reference's notice instead of failing the whole request.
    if len(encoded) >= IMAGE_MAX_BASE64_BYTES:
        note += "\n[Image omitted: could not be resized below the inline image size limit.]"
        return text_result(note)
    size = image_dimensions(data, mime)
    if size is not None and (size[0] > IMAGE_MAX_DIMENSION or size[1] > IMAGE_MAX_DIMENSION):
        note += (
            f"\n[Image: original {size[0]}x{size[1]}, larger than {IMAGE_MAX_DIMENSION}x"
            f"{IMAGE_MAX_DIMENSION}; sent unresized.]"
        )
    content: list[TextContent | ImageContent] = [
        {"type": "text", "text": note},
        {"type": "image", "data": encoded, "mimeType": mime},
    ]
    return {"content": content, "details": None}


def _text_result(text: str, path: str, offset: object, limit: object) -> ToolResult:
    lines = text.split("\n")
    total = len(lines)
    start = max(0, to_int(offset, 0) - 1) if offset else 0
    if start >= total:
        raise ToolError(f"Offset {js_number(offset)} is beyond end of file ({total} lines total)")
    user_limited: int | None = None
    if limit is not None:
        end = min(start + max(0, to_int(limit, 0)), total)
        selected = "\n".join(lines[start:end])
        user_limited = end - start
    else:
        selected = "\n".join(lines[start:])
    truncation = truncate_head(selected)
    first = start + 1
    if truncation.first_line_exceeds_limit:
        size = format_size(utf8_len(lines[start]))
        return text_result(
            f"[Line {first} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{first}p' {path} | head -c {DEFAULT_MAX_BYTES}]",
            {"truncation": truncation.to_details()},
        )
    if truncation.truncated:
        last = first + truncation.output_lines - 1
        limit_note = (
            ""
            if truncation.truncated_by == "lines"
            else f" ({format_size(DEFAULT_MAX_BYTES)} limit)"
        )
        return text_result(
            f"{truncation.content}\n\n[Showing lines {first}-{last} of {total}{limit_note}. "
            f"Use offset={last + 1} to continue.]",
            {"truncation": truncation.to_details()},
        )
    if user_limited is not None and start + user_limited < total:
        remaining = total - (start + user_limited)
        return text_result(
            f"{truncation.content}\n\n[{remaining} more lines in file. "
            f"Use offset={start + user_limited + 1} to continue.]"
        )
    return text_result(truncation.content)


async def execute_read(
    tool_call_id: str, args: dict[str, object], ctx: ToolContext, on_update: OnUpdate = None
) -> ToolResult:
    """Run the read tool (see :func:`create_read_tool`)."""
    raise_if_aborted(ctx)
    backend = ctx.backend
    path = str(args["path"])
    absolute = await resolve_read_path(path, ctx.cwd, backend.exists, backend.home())
    if await backend.stat(absolute) is None:
        raise ToolError(f"ENOENT: no such file or directory, access '{absolute}'")
    try:
        data = await backend.read_file(absolute)
    except OSError as error:
        raise ToolError(os_error_text(error, "open", absolute)) from error
    raise_if_aborted(ctx)
    mime = detect_image_mime(data[:SNIFF_BYTES])
    if mime is not None:
        return _image_result(data, mime)
    # Invalid UTF-8 becomes U+FFFD, as Node's Buffer.toString does.
    return _text_result(
        data.decode("utf-8", "replace"), path, args.get("offset"), args.get("limit")
    )


def create_read_tool() -> ToolDefinition:
    """The ``read`` tool definition."""
    return ToolDefinition(
        name="read",
        label="read",
        description=(
            "Read a file. Text files come back as text; JPEG, PNG, GIF and WebP images come back "
            f"as image attachments. Text output stops at {DEFAULT_MAX_LINES} lines or "
            f"{DEFAULT_MAX_BYTES // 1024}KB, whichever comes first; page through longer files "
            "with offset and limit until you have what you need."
        ),
        parameters=READ_PARAMETERS,
        execute=execute_read,
        prompt_snippet="Read the contents of a file",
        prompt_guidelines=("Read files with read rather than cat or sed.",),
    )
