"""Where session files live: default layout and the override precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from knightcode._session import (
    SESSION_DIR_ENV,
    default_session_dir,
    encode_cwd,
    resolve_session_dir,
)
from knightcode._session.location import session_file_name


def test_encode_cwd_like_the_reference() -> None:
    assert encode_cwd("/home/u/proj") == "--home-u-proj--"
    assert encode_cwd("C:\\Users\\me\\proj") == "--C--Users-me-proj--"
    assert encode_cwd("\\\\server\\share") == "---server-share--"
    assert encode_cwd("relative/dir") == "--relative-dir--"


def test_default_session_dir(tmp_path: Path) -> None:
    assert (
        default_session_dir("/home/u/proj", tmp_path) == tmp_path / "sessions" / "--home-u-proj--"
    )


def test_session_file_name() -> None:
    assert (
        session_file_name("2026-11-29T16:55:23.723Z", "abc") == "2026-11-29T16-55-23-723Z_abc.jsonl"
    )


def test_precedence_cli_then_env_then_settings_then_default(tmp_path: Path) -> None:
    cwd, agent = "/home/u/proj", tmp_path / "agent"
    env = {SESSION_DIR_ENV: "/from/env"}
    assert resolve_session_dir(
        cwd, agent, cli_dir="/from/cli", env=env, settings_dir="/from/settings"
    ) == Path("/from/cli")
    assert resolve_session_dir(cwd, agent, env=env, settings_dir="/from/settings") == Path(
        "/from/env"
    )
    assert resolve_session_dir(cwd, agent, env={}, settings_dir="/from/settings") == Path(
        "/from/settings"
    )
    assert resolve_session_dir(cwd, agent, env={}) == agent / "sessions" / "--home-u-proj--"
    assert (
        resolve_session_dir(cwd, agent, env={SESSION_DIR_ENV: ""})
        == agent / "sessions" / "--home-u-proj--"
    )


def test_relative_and_home_overrides(tmp_path: Path) -> None:
    home = Path.home()
    assert resolve_session_dir("/work/p", tmp_path, cli_dir="sess", env={}) == Path("/work/p/sess")
    assert resolve_session_dir("/work/p", tmp_path, cli_dir="~/s", env={}) == home / "s"


def test_environment_is_read_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SESSION_DIR_ENV, str(tmp_path / "env-dir"))
    assert resolve_session_dir("/x", tmp_path) == tmp_path / "env-dir"
