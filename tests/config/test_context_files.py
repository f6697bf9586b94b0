"""Context file discovery: agent dir first, then root → cwd, one file per directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knightcode._config.context_files import ContextFile, discover_context_files


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A working directory three levels below tmp_path/ws."""
    cwd = tmp_path / "ws" / "a" / "b"
    cwd.mkdir(parents=True)
    return cwd


def found(agent_dir: Path, cwd: Path, tmp_path: Path) -> list[tuple[Path, str]]:
    # Ancestors above tmp_path belong to the machine, not the test.
    return [
        (item.path, item.content)
        for item in discover_context_files(agent_dir, cwd)
        if item.path.is_relative_to(tmp_path)
    ]


def test_agent_dir_first_then_root_down_to_cwd(agent_dir: Path, tree: Path, tmp_path: Path) -> None:
    user = put(agent_dir / "AGENTS.md", "user")
    top = put(tmp_path / "ws" / "AGENTS.md", "top")
    mid = put(tmp_path / "ws" / "a" / "CLAUDE.md", "mid")
    here = put(tree / "AGENTS.md", "here")
    assert found(agent_dir, tree, tmp_path) == [
        (user, "user"),
        (top, "top"),
        (mid, "mid"),
        (here, "here"),
    ]


def test_agents_md_is_preferred_and_one_file_per_directory(
    agent_dir: Path, tree: Path, tmp_path: Path
) -> None:
    put(tree / "CLAUDE.md", "claude")
    agents = put(tree / "AGENTS.md", "agents")
    assert found(agent_dir, tree, tmp_path) == [(agents, "agents")]


@pytest.mark.parametrize("name", ["AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"])
def test_each_candidate_name_is_found(
    agent_dir: Path, tree: Path, tmp_path: Path, name: str
) -> None:
    path = put(tree / name, name)
    assert found(agent_dir, tree, tmp_path) == [(path, name)]


def test_override_replaces_only_its_own_directory(
    agent_dir: Path, tree: Path, tmp_path: Path
) -> None:
    user = put(agent_dir / "AGENTS.md", "user")
    parent = put(tree.parent / "AGENTS.md", "parent")
    put(tree / "AGENTS.md", "ignored")
    put(tree / "CLAUDE.md", "ignored too")
    override = put(tree / "AGENTS.override.md", "override")
    assert found(agent_dir, tree, tmp_path) == [
        (user, "user"),
        (parent, "parent"),
        (override, "override"),
    ]


def test_override_in_agent_dir(agent_dir: Path, tree: Path, tmp_path: Path) -> None:
    put(agent_dir / "AGENTS.md", "user")
    override = put(agent_dir / "AGENTS.override.md", "user override")
    assert found(agent_dir, tree, tmp_path) == [(override, "user override")]


def test_a_file_reached_twice_is_used_once_at_its_first_place(tree: Path, tmp_path: Path) -> None:
    agent_dir = tmp_path / "ws"  # the agent dir is also an ancestor of cwd
    shared = put(agent_dir / "AGENTS.md", "shared")
    here = put(tree / "AGENTS.md", "here")
    assert found(agent_dir, tree, tmp_path) == [(shared, "shared"), (here, "here")]


def test_symlinked_duplicates_are_used_once(agent_dir: Path, tree: Path, tmp_path: Path) -> None:
    user = put(agent_dir / "AGENTS.md", "user")
    (tree / "AGENTS.md").symlink_to(user)
    assert found(agent_dir, tree, tmp_path) == [(user, "user")]


def test_directory_named_like_a_context_file_is_skipped(
    agent_dir: Path, tree: Path, tmp_path: Path
) -> None:
    (tree / "AGENTS.md").mkdir()
    claude = put(tree / "CLAUDE.md", "claude")
    assert found(agent_dir, tree, tmp_path) == [(claude, "claude")]


def test_non_utf8_content_is_replaced(agent_dir: Path, tree: Path, tmp_path: Path) -> None:
    (tree / "AGENTS.md").write_bytes(b"caf\xe9")
    assert found(agent_dir, tree, tmp_path) == [(tree / "AGENTS.md", "caf\ufffd")]


def test_paths_are_absolute(agent_dir: Path, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    put(tree / "AGENTS.md", "x")
    monkeypatch.chdir(tree.parent)
    files = discover_context_files(agent_dir, Path("b"))
    assert files[-1] == ContextFile(tree / "AGENTS.md", "x")


def test_a_world_writable_file_is_skipped_with_a_warning(
    agent_dir: Path, tree: Path, tmp_path: Path
) -> None:
    planted = put(tree.parent / "AGENTS.md", "planted")
    planted.chmod(0o666)
    here = put(tree / "AGENTS.md", "here")
    warnings: list[str] = []
    files = discover_context_files(agent_dir, tree, warnings)
    assert [item.path for item in files if item.path.is_relative_to(tmp_path)] == [here]
    assert warnings == [f"context file {planted} skipped: it is world-writable"]


def test_a_symlink_owned_by_another_user_is_skipped(
    agent_dir: Path, tree: Path, tmp_path: Path
) -> None:
    # Someone else's link could point at any file of the user's and send it to the model.
    if os.geteuid() != 0:
        pytest.skip("giving a link to another user needs root")
    secret = put(tmp_path / "secret.txt", "secret")
    link = tree / "AGENTS.md"
    link.symlink_to(secret)
    os.lchown(link, 54321, 54321)
    warnings: list[str] = []
    assert found(agent_dir, tree, tmp_path) == []
    discover_context_files(agent_dir, tree, warnings)
    assert warnings == [f"context file {link} skipped: it is owned by another user (uid 54321)"]
