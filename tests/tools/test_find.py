"""The find tool (rg --files + fd glob rules), including the reference's find cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._tools import ToolContext, ToolError
from knightcode._tools.glob_match import compile_glob, type_glob

from .helpers import run, text_of, write


def lines_of(text: str) -> list[str]:
    return [line.strip() for line in text.split("\n") if line.strip()]


async def test_includes_hidden_files(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / ".secret" / "hidden.txt", "hidden")
    write(project_dir / "visible.txt", "visible")
    result = await run("find", {"pattern": "**/*.txt", "path": str(project_dir)}, ctx)
    assert lines_of(text_of(result)) == [".secret/hidden.txt", "visible.txt"]
    assert result["details"] is None


async def test_respects_gitignore(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / ".gitignore", "ignored.txt\n")
    write(project_dir / "ignored.txt", "ignored")
    write(project_dir / "kept.txt", "kept")
    output = text_of(await run("find", {"pattern": "**/*.txt", "path": str(project_dir)}, ctx))
    assert output == "kept.txt"


async def test_respects_gitignore_with_name_pattern(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / ".gitignore", "ignored.txt\n")
    write(project_dir / "ignored.txt", "x")
    write(project_dir / "sub" / ".gitignore", "*.log\n")
    write(project_dir / "sub" / "a.log", "x")
    write(project_dir / "a.log", "x")
    write(project_dir / "kept.txt", "x")
    assert text_of(await run("find", {"pattern": "*.txt"}, ctx)) == "kept.txt"
    assert text_of(await run("find", {"pattern": "*.log"}, ctx)) == "a.log"


async def test_name_patterns_match_at_any_depth(ctx: ToolContext, project_dir: Path) -> None:
    for name in ("a.py", "pkg/b.py", "pkg/deep/c.py", "pkg/c.pyc", "notes.md"):
        write(project_dir / name, "")
    assert lines_of(text_of(await run("find", {"pattern": "*.py"}, ctx))) == [
        "a.py",
        "pkg/b.py",
        "pkg/deep/c.py",
    ]


async def test_smart_case(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "README.MD", "")
    write(project_dir / "guide.md", "")
    assert lines_of(text_of(await run("find", {"pattern": "*.md"}, ctx))) == [
        "README.MD",
        "guide.md",
    ]
    assert text_of(await run("find", {"pattern": "*.MD"}, ctx)) == "README.MD"


async def test_path_patterns(ctx: ToolContext, project_dir: Path) -> None:
    for name in (
        "src/app/test_a.py",
        "lib/src/test_b.py",
        "src/test_c.py",
        "tests/test_d.py",
        "src/app/a.py",
    ):
        write(project_dir / name, "")
    found = lines_of(text_of(await run("find", {"pattern": "src/**/test_*.py"}, ctx)))
    assert found == ["lib/src/test_b.py", "src/app/test_a.py", "src/test_c.py"]
    # As with fd, a pattern with "/" may start at any directory ("**/" is implied).
    found = lines_of(text_of(await run("find", {"pattern": "src/*.py"}, ctx)))
    assert found == ["lib/src/test_b.py", "src/test_c.py"]


async def test_braces_and_classes(ctx: ToolContext, project_dir: Path) -> None:
    for name in ("a.ts", "b.tsx", "c.js", "d1.txt", "dx.txt"):
        write(project_dir / name, "")
    assert lines_of(text_of(await run("find", {"pattern": "*.{ts,tsx}"}, ctx))) == ["a.ts", "b.tsx"]
    assert text_of(await run("find", {"pattern": "d[0-9].txt"}, ctx)) == "d1.txt"
    assert text_of(await run("find", {"pattern": "d[!0-9].txt"}, ctx)) == "dx.txt"


async def test_absolute_pattern(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "x" / "y.txt", "")
    output = text_of(await run("find", {"pattern": f"{project_dir}/x/*.txt"}, ctx))
    assert output == "x/y.txt"


async def test_limit(ctx: ToolContext, project_dir: Path) -> None:
    for i in range(30):
        write(project_dir / f"f{i:02}.txt", "")
    result = await run("find", {"pattern": "*.txt", "limit": 10}, ctx)
    text = text_of(result)
    assert len(text.split("\n\n")[0].split("\n")) == 10
    assert text.endswith("\n\n[10 results limit reached. Use limit=20 for more, or refine pattern]")
    assert result["details"] == {"resultLimitReached": 10}


async def test_no_files(ctx: ToolContext, project_dir: Path) -> None:
    write(project_dir / "a.txt", "")
    assert text_of(await run("find", {"pattern": "*.rs"}, ctx)) == "No files found matching pattern"


async def test_path_not_found_and_not_a_directory(ctx: ToolContext, project_dir: Path) -> None:
    with pytest.raises(ToolError, match=f"^Path not found: {project_dir}/nope$"):
        await run("find", {"pattern": "*", "path": "nope"}, ctx)
    write(project_dir / "file.txt", "")
    with pytest.raises(ToolError, match=f"^Not a directory: {project_dir}/file.txt$"):
        await run("find", {"pattern": "*", "path": "file.txt"}, ctx)


async def test_aborted_before_start(ctx: ToolContext) -> None:
    ctx.signal.abort()
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        await run("find", {"pattern": "*"}, ctx)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "a/b/c.pyc", False),
        ("c.py", "a/c.py", True),
        ("**", "a/b/c", True),
        ("a/**", "a/b/c", True),
        ("a/**", "b/a", False),
        ("**/b/*.py", "a/b/c.py", True),
        ("b/*.py", "a/b/c/d.py", False),
        ("a/**/d.py", "a/d.py", True),
        ("a/**/d.py", "a/b/c/d.py", True),
        ("?.py", "ab.py", False),
        ("x**y.py", "xaby.py", True),
        ("x**y.py", "xa/by.py", False),
        ("\\*.py", "*.py", True),
        ("\\*.py", "a.py", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    assert bool(compile_glob(pattern).matching_lines(path + "\n")) is matches


def test_type_glob_prefilter() -> None:
    assert type_glob("*.py") == "*.[pP][yY]"
    assert type_glob("*.PY") == "*.PY"
    assert type_glob("*.{a,b}") is None
    assert type_glob("src/**/test_*.py") == "[tT][eE][sS][tT]_*.[pP][yY]"
    assert type_glob("src/**") is None
    assert type_glob("/abs/Dir/x.py") == "x.py"
