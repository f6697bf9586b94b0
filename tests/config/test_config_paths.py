"""Locating the agent directory and project configuration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from knightcode._config.paths import agent_dir, expand_path, project_config_dir
from knightcode._errors import ConfigError


def test_agent_dir_comes_from_the_environment(tmp_path: Path) -> None:
    assert agent_dir() == Path(os.environ["KNIGHTCODE_CODING_AGENT_DIR"])
    assert agent_dir({"KNIGHTCODE_CODING_AGENT_DIR": str(tmp_path / "x")}) == tmp_path / "x"


def test_agent_dir_expands_tilde(tmp_path: Path) -> None:
    assert agent_dir({"KNIGHTCODE_CODING_AGENT_DIR": "~/kc"}) == Path.home() / "kc"
    assert agent_dir({"KNIGHTCODE_CODING_AGENT_DIR": f"{tmp_path}/a/../b"}) == tmp_path / "b"


@pytest.mark.parametrize("value", ["rel/agent", ".knightcode", "./x", "~nosuchuser-kc/x"])
def test_a_relative_agent_dir_is_a_configuration_error(value: str) -> None:
    # Relative to the start directory, it would make a project's .knightcode the agent dir.
    with pytest.raises(ConfigError) as info:
        agent_dir({"KNIGHTCODE_CODING_AGENT_DIR": value})
    assert str(info.value) == (
        f"KNIGHTCODE_CODING_AGENT_DIR must be an absolute path (or start with ~), got {value!r}"
    )


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
