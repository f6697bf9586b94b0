"""Path handling, transcribed from the reference's path-utils.test.ts."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from knightcode._tools.path_utils import (
    expand_path,
    read_path_candidates,
    resolve_read_path,
    resolve_to_cwd,
)


async def _exists(path: str) -> bool:
    return os.path.exists(path)


def test_expand_tilde() -> None:
    assert expand_path("~", home="/home/u") == "/home/u"
    assert expand_path("~/src/a.py", home="/home/u") == "/home/u/src/a.py"
    assert expand_path("~other/a", home="/home/u") == "~other/a"


def test_expand_tilde_uses_real_home_by_default() -> None:
    assert expand_path("~/x") == os.path.expanduser("~") + "/x"


def test_strips_one_leading_at() -> None:
    assert expand_path("@src/app.py") == "src/app.py"
    assert expand_path("@@x") == "@x"


def test_unicode_spaces_become_plain_spaces() -> None:
    for space in ("\u00a0", "\u2000", "\u2005", "\u200a", "\u202f", "\u205f", "\u3000"):
        assert expand_path(f"my{space}file.txt") == "my file.txt"


def test_resolve_relative_and_absolute() -> None:
    assert resolve_to_cwd("a/../b.txt", "/work") == "/work/b.txt"
    assert resolve_to_cwd("/abs/x.txt", "/work") == "/abs/x.txt"
    assert resolve_to_cwd(".", "/work") == "/work"


async def test_read_path_existing_file_as_is(tmp_path: Path) -> None:
    target = tmp_path / "plain.txt"
    target.write_text("x")
    assert await resolve_read_path("plain.txt", tmp_path, _exists) == str(target)


async def test_read_path_macos_am_pm_narrow_space(tmp_path: Path) -> None:
    real = tmp_path / "Screenshot 2024-01-01 at 10.00.00\u202fAM.png"
    real.write_text("x")
    typed = "Screenshot 2024-01-01 at 10.00.00 AM.png"
    assert await resolve_read_path(typed, tmp_path, _exists) == str(real)


async def test_read_path_nfd_variant(tmp_path: Path) -> None:
    name = unicodedata.normalize("NFD", "café.txt")
    real = tmp_path / name
    real.write_text("x")
    if (tmp_path / "café.txt").exists():  # a normalising filesystem makes the case moot
        return
    assert await resolve_read_path("café.txt", tmp_path, _exists) == str(real)


async def test_read_path_curly_apostrophe(tmp_path: Path) -> None:
    real = tmp_path / "Capture d\u2019cran.png"
    real.write_text("x")
    assert await resolve_read_path("Capture d'cran.png", tmp_path, _exists) == str(real)


async def test_read_path_nfd_and_curly_apostrophe(tmp_path: Path) -> None:
    real = tmp_path / unicodedata.normalize("NFD", "Capture d\u2019écran.png")
    real.write_text("x")
    assert await resolve_read_path("Capture d'écran.png", tmp_path, _exists) == str(real)


async def test_read_path_missing_falls_back_to_plain_resolution(tmp_path: Path) -> None:
    assert await resolve_read_path("nope.txt", tmp_path, _exists) == str(tmp_path / "nope.txt")


def test_candidates_order_and_dedup() -> None:
    candidates = read_path_candidates("a b.txt", "/w")
    assert candidates == ["/w/a b.txt"]
    assert read_path_candidates("x 1 PM.png", "/w")[1] == "/w/x 1\u202fPM.png"
