"""The ``@`` file list (ripgrep, git, walk) and its fuzzy ranking."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from knightcode._modes.interactive.file_index import (
    FileIndex,
    fuzzy_score,
    list_project_files,
    rank_paths,
)


def test_basename_and_contiguous_matches_rank_first() -> None:
    paths = [
        "src/render/editor_view.py",
        "src/editor.py",
        "docs/edit_in_place.md",
        "e/d/i/t/o/r.txt",
        "tests/test_editor.py",
        "README.md",
    ]
    ranked = rank_paths("editor", paths)
    assert ranked[0] == "src/editor.py"
    assert set(ranked[1:3]) == {"src/render/editor_view.py", "tests/test_editor.py"}
    assert ranked[-1] == "e/d/i/t/o/r.txt"
    assert "README.md" not in ranked
    assert fuzzy_score("xyz", "src/editor.py") is None
    # Case does not matter; a query with a slash matches across directories.
    assert rank_paths("SRC/ED", paths)[0] == "src/editor.py"


def test_ranking_caps_the_results_and_lists_shallow_paths_for_an_empty_query() -> None:
    paths = [f"dir/file{n}.txt" for n in range(200)] + ["top.txt"]
    assert len(rank_paths("file", paths)) == 50
    assert rank_paths("", paths, limit=3)[0] == "top.txt"


def _tree(root: Path) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x")
    (root / "build.log").write_text("x")
    (root / ".gitignore").write_text("*.log\n")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("x")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.txt").write_text("x")


def test_git_listing_honours_gitignore(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / ".gitignore").write_text("*.log\nnode_modules/\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    files = list_project_files(tmp_path, rg="")
    assert files == ["pkg/mod.py"]  # hidden ones left out, as ripgrep does


def test_walk_fallback_skips_hidden_and_build_directories(tmp_path: Path) -> None:
    _tree(tmp_path)
    files = list_project_files(tmp_path, rg="", git="")
    assert sorted(files) == ["build.log", "pkg/mod.py"]  # no .gitignore parsing here


def test_ripgrep_listing(tmp_path: Path) -> None:
    _tree(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    assert sorted(list_project_files(tmp_path, git="")) == [
        "node_modules/dep/index.js",
        "pkg/mod.py",
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert list_project_files(empty, git="") == []


def test_index_adds_directories_and_loads_once(tmp_path: Path) -> None:
    _tree(tmp_path)
    index = FileIndex(tmp_path, rg="", git="")
    assert not index.loaded and index.search("mod") == []
    index.load()
    assert index.search("pkg")[0] == "pkg/"
    (tmp_path / "pkg" / "new.py").write_text("x")
    index.load()
    assert "pkg/new.py" not in index.search("new")
    index.invalidate()
    index.load()
    assert index.search("new")[0] == "pkg/new.py"


def test_the_ripgrep_wheels_rg_is_found_without_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # knightcode run by absolute path: the venv's bin/ (where the ripgrep wheel put rg) is not
    # on PATH, and the tools' rg must still be used.
    from knightcode._modes.interactive.file_index import find_rg

    monkeypatch.setenv("PATH", "/nonexistent")
    found = find_rg()
    assert found is not None and Path(found).parent == Path(sys.executable).parent
