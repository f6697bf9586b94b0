"""The write tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._tools import ToolContext, ToolError

from .helpers import run, text_of


async def test_writes_file(ctx: ToolContext, project_dir: Path) -> None:
    target = project_dir / "write-test.txt"
    result = await run("write", {"path": str(target), "content": "Test content"}, ctx)
    assert text_of(result) == f"Successfully wrote 12 bytes to {target}"
    assert result["details"] is None
    assert target.read_text() == "Test content"


async def test_creates_parent_directories(ctx: ToolContext, project_dir: Path) -> None:
    result = await run("write", {"path": "nested/dir/test.txt", "content": "Nested content"}, ctx)
    assert text_of(result) == "Successfully wrote 14 bytes to nested/dir/test.txt"
    assert (project_dir / "nested" / "dir" / "test.txt").read_text() == "Nested content"


async def test_overwrites(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "f.txt").write_text("old old old")
    await run("write", {"path": "f.txt", "content": "new"}, ctx)
    assert (project_dir / "f.txt").read_text() == "new"


async def test_reports_utf16_length_like_the_reference(ctx: ToolContext, project_dir: Path) -> None:
    # "é" is one UTF-16 unit (2 bytes in UTF-8), the emoji two units (4 bytes).
    result = await run("write", {"path": "u.txt", "content": "é😀"}, ctx)
    assert text_of(result) == "Successfully wrote 3 bytes to u.txt"
    assert (project_dir / "u.txt").read_bytes() == "é😀".encode()


async def test_aborted(ctx: ToolContext, project_dir: Path) -> None:
    ctx.signal.abort()
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        await run("write", {"path": "x.txt", "content": "x"}, ctx)
    assert not (project_dir / "x.txt").exists()
