"""Shared fixtures: every test runs with a private HOME, agent dir and working directory."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# The in-process session builders (``scenario``, ``build``) and their scripted ``server``; the
# real llama.cpp routers (session-scoped: one per run, shared by every package that uses them).
pytest_plugins = ["tests.harness", "tests.llama_cpp.routers"]


@pytest.fixture(autouse=True)
def hermetic_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A temporary HOME, agent dir and cwd; deterministic output; no inherited knightcode env."""
    home = tmp_path / "home"
    home.mkdir()
    for name in list(os.environ):
        if name.startswith("KNIGHTCODE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KNIGHTCODE_CODING_AGENT_DIR", str(home / ".knightcode" / "agent"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)


@pytest.fixture
def agent_dir() -> Path:
    """The agent directory of this test (created)."""
    path = Path(os.environ["KNIGHTCODE_CODING_AGENT_DIR"])
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def project_dir() -> Path:
    """The test's working directory (a fresh, empty project)."""
    return Path.cwd()


@pytest.fixture
def knightcode_exe() -> list[str]:
    """The command that runs the installed knightcode in a subprocess."""
    return [sys.executable, "-m", "knightcode"]
