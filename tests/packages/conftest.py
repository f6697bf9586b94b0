"""Package tests run the real command line in subprocesses against real git repositories."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def run(
    *args: str, python: str = sys.executable, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``knightcode ARGS`` as a subprocess, with the test's environment and no terminal."""
    return subprocess.run(
        [python, "-m", "knightcode", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
        env=os.environ.copy(),
        cwd=cwd,
    )


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture(autouse=True)
def only_extensions(monkeypatch: pytest.MonkeyPatch) -> None:
    """No built-in or installed entry point loads; the packages' own plugins are allowed below."""
    monkeypatch.setenv("KNIGHTCODE_LOAD_PLUGINS", "plugin:kc-tiny")


@pytest.fixture
def resource_repo(tmp_path: Path) -> Path:
    """A git repository laid out as a resource package, tagged ``v1``.

    Its extension writes ``<repo>.imported`` when imported, so a test can tell it loaded.
    """
    repo = tmp_path / "repo"
    (repo / "skills" / "hello").mkdir(parents=True)
    (repo / "extensions").mkdir()
    (repo / "prompts").mkdir()
    (repo / "skills" / "hello" / "SKILL.md").write_text(
        "---\nname: hello\ndescription: Says hello.\n---\nSay hello.\n"
    )
    canary = tmp_path / "repo.imported"
    (repo / "extensions" / "greet.py").write_text(
        f"from pathlib import Path\nPath({str(canary)!r}).write_text('imported')\n"
    )
    (repo / "prompts" / "review.md").write_text("Review $1\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "tag", "v1")
    return repo
