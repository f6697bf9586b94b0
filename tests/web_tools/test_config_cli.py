"""``knightcode tools``: list, set-key (never echoed, 0600), show (the key never printed)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from knightcode_builtins.web_tools.config import load_tools_config, tools_json_path

SECRET = "BSA-very-secret-0123456789"


def knightcode(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BRAVE_API_KEY"}
    return subprocess.run(
        [sys.executable, "-m", "knightcode", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_list_shows_origin_and_state(agent_dir: Path) -> None:
    done = knightcode("tools", "list", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["read"] == {"name": "read", "origin": "core", "enabled": True}
    assert rows["grep"] == {"name": "grep", "origin": "core", "enabled": False}
    assert rows["web_search"] == {
        "name": "web_search",
        "origin": "builtin:web-tools",
        "enabled": True,
    }
    table = knightcode("tools", "list")
    assert any(
        line.split() == ["web_search", "builtin:web-tools", "on"]
        for line in table.stdout.splitlines()
    )


def test_list_with_the_plugin_disabled_shows_its_tools_off(agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:web-tools"]}))
    done = knightcode("tools", "list", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["web_search"]["enabled"] is False and rows["web_fetch"]["enabled"] is False
    refused = knightcode("tools", "set-key", "brave", stdin=SECRET + "\n")
    assert refused.returncode == 2 and "builtin:web-tools is not loaded" in refused.stderr


def test_set_key_from_stdin_is_stored_0600_and_never_printed(agent_dir: Path) -> None:
    path = tools_json_path(agent_dir)
    path.write_text(json.dumps({"search": {"count": 3}}))
    done = knightcode("tools", "set-key", "brave", stdin=SECRET + "\n")
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    config = load_tools_config(agent_dir)
    assert config.brave_api_key == SECRET and config.search.count == 3  # the rest is kept
    shown = knightcode("tools", "show")
    assert shown.returncode == 0, shown.stderr
    assert SECRET not in shown.stdout
    described = json.loads(shown.stdout)
    assert described["braveApiKey"] == "set (tools.json)" and described["search"]["count"] == 3
    cleared = knightcode("tools", "set-key", "brave", "--clear")
    assert cleared.returncode == 0, cleared.stderr
    assert load_tools_config(agent_dir).brave_api_key is None
    assert json.loads(knightcode("tools", "show").stdout)["braveApiKey"] == "not set"


def test_an_empty_key_is_refused(agent_dir: Path) -> None:
    done = knightcode("tools", "set-key", "brave", stdin="\n")
    assert done.returncode == 2 and "no key given" in done.stderr
    assert not tools_json_path(agent_dir).exists()


def test_a_broken_tools_json_is_one_line_naming_file_and_key(agent_dir: Path) -> None:
    path = tools_json_path(agent_dir)
    path.write_text('{"fetch": {"maxRedirects": -1}}')
    for args in (("tools", "show"), ("tools", "set-key", "brave")):
        done = knightcode(*args, stdin=SECRET + "\n")
        assert done.returncode == 2
        assert done.stderr == (
            f"knightcode: error: {path}: fetch.maxRedirects: must be between 0 and 50 (got -1)\n"
        )
    assert path.read_text() == '{"fetch": {"maxRedirects": -1}}'  # not overwritten
