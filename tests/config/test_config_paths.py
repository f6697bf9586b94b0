"""Locating the agent directory and project configuration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knightcode._config.paths import agent_dir, expand_path, project_config_dir


def test_agent_dir_comes_from_the_environment(tmp_path: Path) -> None:
    assert agent_dir() == Path(os.environ["KNIGHTCODE_CODING_AGENT_DIR"])
    assert agent_dir({"KNIGHTCODE_CODING_AGENT_DIR": str(tmp_path / "x")}) == tmp_path / "x"


def test_agent_dir_expands_tilde_and_makes_relative_values_absolute(project_dir: Path) -> None:
    assert agent_dir({"KNIGHTCODE_CODING_AGENT_DIR": "~/kc"}) == Path.home() / "kc"
    assert agent_dir({"KNIGHTCODE_CODING_AGENT_DIR": "rel/agent"}) == project_dir / "rel" / "agent"


def test_agent_dir_defaults_under_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KNIGHTCODE_CODING_AGENT_DIR")
    assert agent_dir() == Path.home() / ".knightcode" / "agent"
    assert agent_dir({"KNIGHTCODE_CODING_AGENT_DIR": ""}) == Path.home() / ".knightcode" / "agent"


def test_project_config_dir(tmp_path: Path) -> None:
    assert project_config_dir(tmp_path) == tmp_path / ".knightcode"


def test_expand_path(tmp_path: Path) -> None:
    assert expand_path("ext/a.py", tmp_path) == tmp_path / "ext" / "a.py"
    assert expand_path("~/a.py", tmp_path) == Path.home() / "a.py"
    assert expand_path("/abs/a.py", tmp_path) == Path("/abs/a.py")
