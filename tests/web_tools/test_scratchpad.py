"""The scratchpad: long results saved whole through the backend, the head returned."""

from __future__ import annotations

import tempfile
from pathlib import Path

from knightcode import ToolContext
from knightcode_builtins.web_tools.scratchpad import (
    ScratchpadSettings,
    default_scratchpad_dir,
    head_of,
    keep_or_spill,
    remove_scratchpads,
    session_scratchpads,
    workspace_ignore_file,
)


async def test_short_text_stays_inline(tmp_path: Path) -> None:
    ctx = ToolContext.local(tmp_path)
    settings = ScratchpadSettings(inline_chars=100, head_chars=10, directory=str(tmp_path / "p"))
    assert (
        await keep_or_spill(
            "short",
            label="x",
            backend=ctx.backend,
            directory=str(tmp_path / "p"),
            settings=settings,
        )
        is None
    )
    assert not (tmp_path / "p").exists()


async def test_long_text_saved_whole_head_returned(tmp_path: Path) -> None:
    ctx = ToolContext.local(tmp_path)
    text = "".join(f"row {n}\n" for n in range(5_000))
    pad = tmp_path / "pad"
    settings = ScratchpadSettings(inline_chars=1_000, head_chars=500)
    spilled = await keep_or_spill(
        text, label="example.com/a?b=c", backend=ctx.backend, directory=str(pad), settings=settings
    )
    assert spilled is not None
    saved = Path(spilled.path)
    assert saved.parent == pad and saved.name.startswith("example.com-a-b-c-")
    assert saved.read_text() == text
    assert spilled.total_chars == len(text)
    assert spilled.text.startswith("row 0\n") and spilled.text.index("[Showing") <= 510
    assert spilled.path in spilled.text


def test_head_cuts_at_a_line_end() -> None:
    assert head_of("aaaa\nbbbb\ncccc", 12) == "aaaa\nbbbb"
    assert head_of("x" * 50, 10) == "x" * 10
    assert head_of("short", 10) == "short"


def test_default_directory_without_a_session(tmp_path: Path) -> None:
    ctx = ToolContext.local(tmp_path)
    assert default_scratchpad_dir(ctx).endswith("knightcode-scratchpad/no-session")


def test_a_sessions_scratchpads_are_found_from_its_file_id_and_project(tmp_path: Path) -> None:
    session_file = tmp_path / "sessions" / "2026_abc.jsonl"
    found = session_scratchpads(session_file, "0193-abc", str(tmp_path / "project"))
    assert found == [
        tmp_path / "sessions" / "2026_abc.scratchpad",
        tmp_path / "project" / ".knightcode" / "scratchpad" / "0193-abc",
    ]
    # In memory (--no-session): the temporary one too.
    assert session_scratchpads(None, "0193-abc", "/p")[0] == (
        Path(tempfile.gettempdir()) / "knightcode-scratchpad" / "0193-abc"
    )


def test_values_from_a_hostile_session_file_build_no_path(tmp_path: Path) -> None:
    session_file = tmp_path / "s.jsonl"
    beside = [tmp_path / "s.scratchpad"]
    for bad_id in ("../../etc", "a/b", "", ".hidden", None, 42):
        assert session_scratchpads(session_file, bad_id, str(tmp_path)) == beside
    assert session_scratchpads(session_file, "ok-id", "relative/path") == beside
    assert session_scratchpads(session_file, "ok-id", ["/"]) == beside


def test_removal_skips_links_and_missing_directories(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (real / "sub" / "page.md").write_text("x")
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(precious)
    assert remove_scratchpads([real, link, tmp_path / "missing"]) == [real]
    assert not real.exists()
    assert (precious / "keep.txt").read_text() == "keep"


async def test_a_workspace_scratchpad_is_ignored_by_git(tmp_path: Path) -> None:
    ctx = ToolContext.local(tmp_path)
    ignore = tmp_path / ".knightcode" / "scratchpad" / ".gitignore"
    settings = ScratchpadSettings(inline_chars=10, head_chars=5)
    await keep_or_spill(
        "x" * 100,
        label="page",
        backend=ctx.backend,
        directory=str(ignore.parent / "session-id"),
        settings=settings,
        ignore_file=str(ignore),
    )
    assert ignore.read_text() == "*\n"
    assert workspace_ignore_file(ctx) is None  # no sandbox: the scratchpad is not in the project
