"""tools.json → the settings web_fetch runs with, read afresh on every call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knightcode import LocalBackend, ToolContext
from knightcode_builtins.web_tools.config import ToolsConfigError
from knightcode_builtins.web_tools.fetch import FetchSettings
from knightcode_builtins.web_tools.scratchpad import ScratchpadSettings
from knightcode_builtins.web_tools.settings import fetch_settings_for


def context(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, backend=LocalBackend(tmp_path), agent_dir=tmp_path)


def test_defaults_without_a_file(tmp_path: Path) -> None:
    assert fetch_settings_for(context(tmp_path)) == FetchSettings()


def test_the_file_is_read_on_each_call(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    (tmp_path / "tools.json").write_text(
        json.dumps(
            {
                "fetch": {"maxBytes": 4096, "allowHosts": ["localhost", "10.0.0.0/8"]},
                "scratchpad": {"inlineChars": 100, "headChars": 10, "dir": "/tmp/pad"},
            }
        )
    )
    settings = fetch_settings_for(ctx)
    assert settings.max_bytes == 4096
    assert settings.allow_hosts == frozenset({"localhost", "10.0.0.0/8"})
    assert settings.scratchpad == ScratchpadSettings(100, 10, "/tmp/pad")
    assert settings.accept_images is False  # no session, no model that takes images
    (tmp_path / "tools.json").write_text(json.dumps({"fetch": {"allowPrivate": True}}))
    assert fetch_settings_for(ctx).allow_private is True


def test_a_broken_file_is_an_error_naming_the_key(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps({"fetch": {"maxRedirects": -1}}))
    with pytest.raises(ToolsConfigError, match=r"tools\.json: fetch\.maxRedirects"):
        fetch_settings_for(context(tmp_path))
