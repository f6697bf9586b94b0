"""The ``read`` tool: a text file with offset/limit and head truncation, or an image.

The file is streamed through the backend (:mod:`~knightcode._tools.read_window` keeps only what
the result can show), so its size costs time, never memory; anything but a regular file is
refused before it is opened.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing

from knightcode._abort import Aborted
from knightcode._plugins.definitions import ToolDefinition
from knightcode._tools.backend import ChunkedReads, ExecutionBackend
from knightcode._tools.context import ToolContext
from knightcode._tools.errors import OPERATION_ABORTED, ToolError
from knightcode._tools.image_info import SNIFF_BYTES, detect_image_mime, image_dimensions
from knightcode._tools.image_resize import dimension_note, resize_image
from knightcode._tools.path_utils import resolve_read_path
from knightcode._tools.read_window import READ_CHUNK_SIZE, LineScanner, LineWindow
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
)
from knightcode._types.messages import ImageContent, TextContent

__all__ = ["IMAGE_MAX_BASE64_BYTES", "IMAGE_MAX_DIMENSION", "create_read_tool"]

IMAGE_MAX_DIMENSION = 2000
# Base64 payload ceiling, below Anthropic's 5 MB per-image limit (the reference's figure).
IMAGE_MAX_BASE64_BYTES = int(4.5 * 1024 * 1024)
# Raw bytes whose base64 form reaches that ceiling: reading an image stops past them.
_IMAGE_MAX_RAW_BYTES = IMAGE_MAX_BASE64_BYTES // 4 * 3
# With images.autoResize a larger file can still be shrunk; past this it is not even decoded.
_RESIZABLE_MAX_RAW_BYTES = 64 * 1024 * 1024

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


def _image_result(data: bytes, mime: str, complete: bool) -> ToolResult:
    """The image as the reference's read tool gives it: a note naming the type, then the image.

    :param complete: ``data`` is the whole file (a larger one was cut off at the raw limit)
    """
    note = f"Read image file [{mime}]"
    if not complete or 4 * ((len(data) + 2) // 3) >= IMAGE_MAX_BASE64_BYTES:
        # A payload the providers would refuse is left out with the reference's notice instead
        # of failing the whole request.
        note += "\n[Image omitted: could not be resized below the inline image size limit.]"
        return text_result(note)
    encoded = base64.b64encode(data).decode("ascii")
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


async def _resized_image_result(data: bytes, mime: str, complete: bool) -> ToolResult:
    """Settings ``images.autoResize``: the image fitted into the limits, with the reference's
    note giving the original size.
    """
    resized = await asyncio.to_thread(resize_image, data, mime) if complete else None
    if resized is None:
        return text_result(
            f"Read image file [{mime}]\n"
            "[Image omitted: could not be resized below the inline image size limit.]"
        )
    if not resized.resized:
        return _image_result(data, mime, complete)
    note = f"Read image file [{resized.mime}]"
    extra = dimension_note(resized)
    if extra:
        note += f"\n{extra}"
    content: list[TextContent | ImageContent] = [
        {"type": "text", "text": note},
        {
            "type": "image",
            "data": base64.b64encode(resized.data).decode("ascii"),
            "mimeType": resized.mime,
        },
    ]
    return {"content": content, "details": None}


async def _image_bytes(head: bytes, chunks: AsyncIterator[bytes], limit: int) -> tuple[bytes, bool]:
    """The image: ``head`` and the chunks after it, stopping once it is past ``limit`` bytes;
    and whether it is complete.
    """
    parts = [head]
    size = len(head)
    async for chunk in chunks:
        if size > limit:
            return b"".join(parts), False
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts), size <= limit


def _text_result(
    window: LineWindow, path: str, offset: object, start: int, limit: int | None
) -> ToolResult:
    if not window.reached_start:
        raise ToolError(
            f"Offset {js_number(offset)} is beyond end of file ({window.file_lines} lines total)"
        )
    truncation = truncate_head(
        window.text, total_lines=window.span_lines, total_bytes=window.span_bytes
    )
    first = start + 1
    # Past COUNT_LIMIT the file was not read to its end: its totals are lower bounds.
    at_least = "" if window.counted_all else "at least "
    if truncation.first_line_exceeds_limit:
        size = (
            f"is {format_size(window.first_line_bytes)}"
            if window.first_line_bytes is not None
            else f"is over {format_size(window.span_bytes)}"
        )
        return text_result(
            f"[Line {first} {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
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
            f"{truncation.content}\n\n[Showing lines {first}-{last} of {at_least}"
            f"{window.file_lines}{limit_note}. Use offset={last + 1} to continue.]",
            {"truncation": truncation.to_details()},
        )
    if limit is not None and start + limit < window.file_lines:
        remaining = window.file_lines - (start + limit)
        more = f"{remaining} more" if window.counted_all else f"At least {remaining} more"
        return text_result(
            f"{truncation.content}\n\n[{more} lines in file. "
            f"Use offset={start + limit + 1} to continue.]"
        )
    return text_result(truncation.content)


async def _file_chunks(backend: ExecutionBackend, path: str) -> AsyncGenerator[bytes, None]:
    """The file piece by piece when the backend can do that, else whole."""
    if isinstance(backend, ChunkedReads):
        async with aclosing(backend.read_chunks(path, READ_CHUNK_SIZE)) as chunks:
            async for chunk in chunks:
                yield chunk
    else:
        yield await backend.read_file(path)


async def _image(data: bytes, mime: str, complete: bool, auto_resize: bool) -> ToolResult:
    if auto_resize:
        return await _resized_image_result(data, mime, complete)
    return _image_result(data, mime, complete)


async def _read(
    backend: ExecutionBackend,
    absolute: str,
    path: str,
    offset: object,
    limit: object,
    auto_resize: bool,
) -> ToolResult:
    """Stream the file: an image whole (bounded by what can be sent), text through a
    :class:`LineScanner`.
    """
    start = max(0, to_int(offset, 0) - 1) if offset else 0
    lines = None if limit is None else max(0, to_int(limit, 0))
    scanner = LineScanner(start, lines)
    head: bytes | None = b""  # the first bytes, until there are enough to recognise an image
    eof = True
    async with aclosing(_file_chunks(backend, absolute)) as chunks:
        async for chunk in chunks:
            if head is not None:
                head += chunk
                if len(head) < SNIFF_BYTES:
                    continue
                mime = detect_image_mime(head[:SNIFF_BYTES])
                if mime is not None:
                    cap = _RESIZABLE_MAX_RAW_BYTES if auto_resize else _IMAGE_MAX_RAW_BYTES
                    data, complete = await _image_bytes(head, chunks, cap)
                    return await _image(data, mime, complete, auto_resize)
                chunk, head = head, None
            if not scanner.feed(chunk):
                eof = False
                break
    if head is not None:  # a file shorter than the sniffing window
        mime = detect_image_mime(head)
        if mime is not None:
            return await _image(head, mime, True, auto_resize)
        scanner.feed(head)
    return _text_result(scanner.result(eof), path, offset, start, lines)


async def execute_read(
    tool_call_id: str, args: dict[str, object], ctx: ToolContext, on_update: OnUpdate = None
) -> ToolResult:
    """Run the read tool (see :func:`create_read_tool`)."""
    raise_if_aborted(ctx)
    backend = ctx.backend
    path = str(args["path"])
    absolute = await resolve_read_path(path, ctx.cwd, backend.exists, backend.home())
    info = await backend.stat(absolute)
    if info is None:
        raise ToolError(f"ENOENT: no such file or directory, access '{absolute}'")
    if not info.is_file and not info.is_dir:
        # Never opened: a FIFO without a writer would block, a device may never end.
        raise ToolError(
            f"Cannot read {absolute}: not a regular file (a FIFO, socket or device). "
            "read only reads regular files."
        )
    try:
        async with ctx.signal.scope():
            result = await _read(
                backend,
                absolute,
                path,
                args.get("offset"),
                args.get("limit"),
                ctx.auto_resize_images,
            )
    except Aborted:
        raise ToolError(OPERATION_ABORTED) from None
    except OSError as error:
        raise ToolError(os_error_text(error, "open", absolute)) from error
    return result


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
