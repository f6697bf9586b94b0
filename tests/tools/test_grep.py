"""The grep tool (ripgrep --json), including the reference's tools.test.ts grep cases."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from knightcode._tools import LocalBackend, ToolContext, ToolError

from .helpers import run, text_of, write


async def test_single_file_shows_its_name(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "example.txt", "first line\nmatch line\nlast line")
    result = await run("grep", {"pattern": "match", "path": str(project_dir / "example.txt")}, ctx)
    assert text_of(result) == "example.txt:2: match line"
    assert result["details"] is None


async def test_limit_and_context(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "context.txt", "before\nmatch one\nafter\nmiddle\nmatch two\nafter two")
    result = await run(
        "grep", {"pattern": "match", "path": "context.txt", "limit": 1, "context": 1}, ctx
    )
    assert text_of(result) == (
        "context.txt-1- before\ncontext.txt:2: match one\ncontext.txt-3- after\n\n"
        "[1 matches limit reached. Use limit=2 for more, or refine pattern]"
    )
    assert result["details"] == {"matchLimitReached": 1}


async def test_directory_search_relative_paths(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "src" / "a.py", "import os\nTODO: one\n")
    write(project_dir / "src" / "deep" / "b.py", "TODO: two\n")
    lines = sorted(text_of(await run("grep", {"pattern": "TODO"}, ctx)).split("\n"))
    assert lines == ["src/a.py:2: TODO: one", "src/deep/b.py:1: TODO: two"]


async def test_respects_gitignore_and_finds_hidden(ctx: ToolContext, project_dir: Path) -> None:
    # rg applies .gitignore inside a git repository (the reference passes no --no-require-git).
    (project_dir / ".git").mkdir()
    write(project_dir / ".gitignore", "ignored.txt\nbuild/\n")
    write(project_dir / "ignored.txt", "needle")
    write(project_dir / "build" / "out.txt", "needle")
    write(project_dir / "kept.txt", "needle")
    write(project_dir / ".config" / "settings", "needle")
    lines = sorted(text_of(await run("grep", {"pattern": "needle"}, ctx)).split("\n"))
    assert lines == [".config/settings:1: needle", "kept.txt:1: needle"]


async def test_glob_ignore_case_and_literal(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "a.py", "Value = a.b\nvalue = axb\n")
    write(project_dir / "a.txt", "value = a.b\n")
    assert (
        text_of(await run("grep", {"pattern": "value", "glob": "*.py"}, ctx))
        == "a.py:2: value = axb"
    )
    insensitive = text_of(
        await run("grep", {"pattern": "value", "glob": "*.py", "ignoreCase": True}, ctx)
    )
    assert insensitive.split("\n") == ["a.py:1: Value = a.b", "a.py:2: value = axb"]
    literal = text_of(await run("grep", {"pattern": "a.b", "literal": True, "glob": "*.py"}, ctx))
    assert literal == "a.py:1: Value = a.b"


async def test_no_matches(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "a.txt", "nothing here")
    result = await run("grep", {"pattern": "absent"}, ctx)
    assert text_of(result) == "No matches found"


async def test_long_lines_are_cut(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "long.txt", "hit " + "z" * 600)
    result = await run("grep", {"pattern": "hit"}, ctx)
    assert text_of(result) == (
        "long.txt:1: hit " + "z" * 496 + "... [truncated]\n\n"
        "[Some lines truncated to 500 chars. Use read tool to see full lines]"
    )
    assert result["details"] == {"linesTruncated": True}


async def test_byte_limit_notice(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "many.txt", "".join(f"hit {i} {'q' * 400}\n" for i in range(150)))
    text = text_of(await run("grep", {"pattern": "hit", "limit": 200}, ctx))
    assert text.endswith("\n\n[50.0KB limit reached]")


async def test_gitignore_outside_a_repository_is_not_applied(
    ctx: ToolContext, project_dir: Path
) -> None:
    write(project_dir / ".gitignore", "ignored.txt\n")
    write(project_dir / "ignored.txt", "needle")
    assert (
        text_of(await run("grep", {"pattern": "needle", "glob": "*.txt"}, ctx))
        == "ignored.txt:1: needle"
    )


async def test_default_limit_is_100(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "many.txt", "".join(f"hit {i}\n" for i in range(300)))
    text = text_of(await run("grep", {"pattern": "hit"}, ctx))
    assert text.count("\n") == 101
    assert text.endswith("[100 matches limit reached. Use limit=200 for more, or refine pattern]")


async def test_crlf_is_stripped(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "win.txt", "a\r\nhit here\r\nb\r\n")
    assert text_of(await run("grep", {"pattern": "hit"}, ctx)) == "win.txt:2: hit here"
    with_context = text_of(await run("grep", {"pattern": "hit", "context": 1}, ctx))
    assert with_context == "win.txt-1- a\nwin.txt:2: hit here\nwin.txt-3- b"


async def test_path_not_found(ctx: ToolContext, project_dir: Path) -> None:
    with pytest.raises(ToolError) as info:
        await run("grep", {"pattern": "x", "path": "nope"}, ctx)
    assert str(info.value) == f"Path not found: {project_dir / 'nope'}"


async def test_rg_error_is_reported(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "a.txt", "x")
    with pytest.raises(ToolError, match="regex parse error"):
        await run("grep", {"pattern": "(unclosed"}, ctx)


async def test_aborted_before_start(ctx: ToolContext) -> None:
    ctx.signal.abort()
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        await run("grep", {"pattern": "x"}, ctx)


class SlowRgBackend(LocalBackend):
    """A backend whose "rg" hangs, to abort a search in flight."""

    def __init__(self, cwd: Path, script: Path) -> None:
        super().__init__(cwd)
        self.script = script

    async def find_executable(self, name: str) -> str | None:
        return str(self.script)


async def test_abort_during_search(project_dir: Path) -> None:
    script = project_dir / "slow-rg"
    script.write_text("#!/bin/sh\nsleep 300\n")
    script.chmod(0o755)
    ctx = ToolContext(project_dir, SlowRgBackend(project_dir, script))
    task = asyncio.ensure_future(run("grep", {"pattern": "x"}, ctx))
    await asyncio.sleep(0.2)
    ctx.signal.abort()
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        await asyncio.wait_for(task, 5)


async def test_missing_rg(project_dir: Path) -> None:
    class NoRg(LocalBackend):
        async def find_executable(self, name: str) -> str | None:
            return None

    with pytest.raises(ToolError, match=r"ripgrep \(rg\) is not available"):
        await run("grep", {"pattern": "x"}, ToolContext(project_dir, NoRg(project_dir)))
