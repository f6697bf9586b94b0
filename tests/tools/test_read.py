"""The read tool: the reference's tools.test.ts read cases plus images and notices."""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path

import pytest

from knightcode._tools import ToolContext, ToolError

from .helpers import run, text_of, write

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8/x8AAwMCAO+X2Z0AAAAASUVORK5CYII="
)


def numbered(count: int) -> str:
    return "\n".join(f"Line {i}" for i in range(1, count + 1))


async def test_reads_file_within_limits(ctx: ToolContext, project_dir: Path) -> None:
    content = "Hello, world!\nLine 2\nLine 3"
    write(project_dir / "test.txt", content)
    result = await run("read", {"path": str(project_dir / "test.txt")}, ctx)
    assert text_of(result) == content
    assert "Use offset=" not in text_of(result)
    assert result["details"] is None


async def test_missing_file(ctx: ToolContext, project_dir: Path) -> None:
    missing = project_dir / "nonexistent.txt"
    with pytest.raises(ToolError, match=r"ENOENT|not found") as info:
        await run("read", {"path": str(missing)}, ctx)
    assert str(info.value) == f"ENOENT: no such file or directory, access '{missing}'"


async def test_line_limit_truncation(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "large.txt", numbered(2500))
    output = text_of(await run("read", {"path": "large.txt"}, ctx))
    assert "Line 1\n" in output and "Line 2000" in output
    assert "Line 2001" not in output
    assert output.endswith("\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")


async def test_byte_limit_truncation(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "wide.txt", "\n".join(f"Line {i}: {'x' * 200}" for i in range(1, 501)))
    output = text_of(await run("read", {"path": "wide.txt"}, ctx))
    assert output.startswith("Line 1:")
    notice = re.search(
        r"\[Showing lines 1-(\d+) of 500 \(50\.0KB limit\)\. Use offset=(\d+) to continue\.\]$",
        output,
    )
    assert notice is not None
    assert int(notice.group(2)) == int(notice.group(1)) + 1


async def test_offset(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "offset.txt", numbered(100))
    output = text_of(await run("read", {"path": "offset.txt", "offset": 51}, ctx))
    assert "Line 50\n" not in output and output.startswith("Line 51\n")
    assert output.endswith("Line 100")
    assert "Use offset=" not in output


async def test_limit(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "limit.txt", numbered(100))
    output = text_of(await run("read", {"path": "limit.txt", "limit": 10}, ctx))
    assert output == numbered(10) + "\n\n[90 more lines in file. Use offset=11 to continue.]"


async def test_offset_and_limit(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "both.txt", numbered(100))
    output = text_of(await run("read", {"path": "both.txt", "offset": 41, "limit": 20}, ctx))
    assert output.startswith("Line 41\n") and "Line 40\n" not in output
    assert "Line 60\n" in output and "Line 61" not in output
    assert output.endswith("[40 more lines in file. Use offset=61 to continue.]")


async def test_offset_beyond_end(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "short.txt", "Line 1\nLine 2\nLine 3")
    with pytest.raises(ToolError) as info:
        await run("read", {"path": "short.txt", "offset": 100}, ctx)
    assert str(info.value) == "Offset 100 is beyond end of file (3 lines total)"


async def test_truncation_details(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "big.txt", numbered(2500))
    details = (await run("read", {"path": "big.txt"}, ctx))["details"]
    truncation = details["truncation"]
    assert truncation["truncated"] is True
    assert truncation["truncatedBy"] == "lines"
    assert (truncation["totalLines"], truncation["outputLines"]) == (2500, 2000)


async def test_offset_continues_after_truncation(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "big.txt", numbered(2500))
    output = text_of(await run("read", {"path": "big.txt", "offset": 2001}, ctx))
    assert output.startswith("Line 2001\n") and output.endswith("Line 2500")


async def test_first_line_over_byte_limit(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "minified.js", "short\n" + "y" * 60000 + "\nafter")
    result = await run("read", {"path": "minified.js", "offset": 2}, ctx)
    assert text_of(result) == (
        "[Line 2 is 58.6KB, exceeds 50.0KB limit. "
        "Use bash: sed -n '2p' minified.js | head -c 51200]"
    )
    assert result["details"]["truncation"]["firstLineExceedsLimit"] is True


async def test_image_detected_by_magic_not_extension(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "image.txt", PNG_1X1)
    result = await run("read", {"path": "image.txt"}, ctx)
    assert result["content"][0] == {"type": "text", "text": "Read image file [image/png]"}
    image = result["content"][1]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]) == PNG_1X1


async def test_image_extension_with_text_content_is_text(
    ctx: ToolContext, project_dir: Path
) -> None:
    write(project_dir / "not-an-image.png", "definitely not a png")
    result = await run("read", {"path": "not-an-image.png"}, ctx)
    assert text_of(result) == "definitely not a png"
    assert all(block["type"] == "text" for block in result["content"])


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (b"\xff\xd8\xff\xe0" + b"\x00" * 20, "image/jpeg"),
        (b"GIF89a" + struct.pack("<HH", 3, 4) + b"\x00" * 10, "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 20, "image/webp"),
    ],
)
async def test_other_image_formats(
    ctx: ToolContext, project_dir: Path, data: bytes, mime: str
) -> None:
    write(project_dir / "blob.bin", data)
    result = await run("read", {"path": "blob.bin"}, ctx)
    assert result["content"][0]["text"] == f"Read image file [{mime}]"
    assert result["content"][1]["mimeType"] == mime


def png_header(width: int, height: int) -> bytes:
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", 13)
        + b"IHDR"
        + struct.pack(">II", width, height)
        + b"\x08\x02\x00\x00\x00"
    )


async def test_large_image_passed_through_with_note(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "huge.png", png_header(3000, 1200))
    result = await run("read", {"path": "huge.png"}, ctx)
    assert result["content"][0]["text"] == (
        "Read image file [image/png]\n"
        "[Image: original 3000x1200, larger than 2000x2000; sent unresized.]"
    )
    assert result["content"][1]["type"] == "image"


async def test_image_too_large_to_inline_is_omitted(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "photo.png", png_header(100, 100) + b"\x00" * (4 * 1024 * 1024))
    result = await run("read", {"path": "photo.png"}, ctx)
    assert result["content"] == [
        {
            "type": "text",
            "text": (
                "Read image file [image/png]\n"
                "[Image omitted: could not be resized below the inline image size limit.]"
            ),
        }
    ]


async def test_at_prefix_and_relative_path(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "src" / "app.py", "print('hi')")
    assert text_of(await run("read", {"path": "@src/app.py"}, ctx)) == "print('hi')"


async def test_invalid_utf8_is_replaced(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "latin1.txt", b"caf\xe9")
    assert text_of(await run("read", {"path": "latin1.txt"}, ctx)) == "caf\ufffd"


async def test_directory_is_an_error(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "sub").mkdir()
    with pytest.raises(ToolError, match="EISDIR"):
        await run("read", {"path": "sub"}, ctx)


async def test_aborted_before_start(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "a.txt", "a")
    ctx.signal.abort()
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        await run("read", {"path": "a.txt"}, ctx)
