"""The ls tool, including the reference's dotfiles case."""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._tools import ToolContext, ToolError

from .helpers import run, text_of, write


async def test_lists_dotfiles_and_directories(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / ".hidden-file", "secret")
    (project_dir / ".hidden-dir").mkdir()
    result = await run("ls", {"path": str(project_dir)}, ctx)
    assert text_of(result) == ".hidden-dir/\n.hidden-file"
    assert result["details"] is None


async def test_case_insensitive_order(ctx: ToolContext, project_dir: Path) -> None:
    for name in ("beta", "Alpha", "gamma", "_under", "Delta"):
        write(project_dir / name, "")
    (project_dir / "Charlie").mkdir()
    assert text_of(await run("ls", {}, ctx)).split("\n") == [
        "_under",
        "Alpha",
        "beta",
        "Charlie/",
        "Delta",
        "gamma",
    ]


async def test_links(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "real").mkdir()
    (project_dir / "to-dir").symlink_to(project_dir / "real")
    (project_dir / "broken").symlink_to(project_dir / "missing")
    assert text_of(await run("ls", {}, ctx)) == "real/\nto-dir/"


async def test_limit(ctx: ToolContext, project_dir: Path) -> None:
    for i in range(12):
        write(project_dir / f"f{i:02}", "")
    result = await run("ls", {"limit": 5}, ctx)
    assert (
        text_of(result)
        == "f00\nf01\nf02\nf03\nf04\n\n[5 entries limit reached. Use limit=10 for more]"
    )
    assert result["details"] == {"entryLimitReached": 5}


async def test_exact_limit_is_not_reported(ctx: ToolContext, project_dir: Path) -> None:
    for i in range(3):
        write(project_dir / f"f{i}", "")
    assert text_of(await run("ls", {"limit": 3}, ctx)) == "f0\nf1\nf2"


async def test_default_limit_500(ctx: ToolContext, project_dir: Path) -> None:
    for i in range(501):
        write(project_dir / f"f{i:03}", "")
    assert text_of(await run("ls", {}, ctx)).endswith(
        "f499\n\n[500 entries limit reached. Use limit=1000 for more]"
    )


async def test_empty_directory(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "empty").mkdir()
    assert text_of(await run("ls", {"path": "empty"}, ctx)) == "(empty directory)"


async def test_errors(ctx: ToolContext, project_dir: Path) -> None:
    with pytest.raises(ToolError, match=f"^Path not found: {project_dir}/nope$"):
        await run("ls", {"path": "nope"}, ctx)
    write(project_dir / "file", "")
    with pytest.raises(ToolError, match=f"^Not a directory: {project_dir}/file$"):
        await run("ls", {"path": "file"}, ctx)


async def test_aborted(ctx: ToolContext) -> None:
    ctx.signal.abort()
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        await run("ls", {}, ctx)
