"""The scratchpad: long results saved whole through the backend, the head returned."""

from __future__ import annotations

from pathlib import Path

from knightcode import ToolContext
from knightcode_builtins.web_tools.scratchpad import (
    ScratchpadSettings,
    default_scratchpad_dir,
    head_of,
    keep_or_spill,
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
