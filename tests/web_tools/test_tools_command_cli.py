"""``knightcode tools set|enable|disable`` for scripts, as real subprocesses: the files they
write, their modes, exit codes and messages.
"""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

from knightcode_builtins.web_tools.config import tools_json_path

from .test_config_cli import SECRET, knightcode


def test_set_writes_one_value_0600_keeping_the_key(agent_dir: Path) -> None:
    path = tools_json_path(agent_dir)
    path.write_text(json.dumps({"braveApiKey": SECRET}))
    done = knightcode("tools", "set", "scratchpad.inlineChars", "20000")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"scratchpad.inlineChars = 20000 (in {path})\n"
    assert json.loads(path.read_text()) == {
        "braveApiKey": SECRET,
        "scratchpad": {"inlineChars": 20000},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert knightcode("tools", "set", "gate.enabled", "true").returncode == 0
    assert knightcode("tools", "set", "scratchpad.dir", "/tmp/pad").returncode == 0
    shown = json.loads(knightcode("tools", "show").stdout)
    assert shown["scratchpad"] == {"inlineChars": 20000, "headChars": 8000, "dir": "/tmp/pad"}
    assert shown["gate"]["enabled"] is True
    reset = knightcode("tools", "set", "scratchpad.inlineChars", "null")
    assert reset.stdout == f"scratchpad.inlineChars = the default (in {path})\n"
    assert json.loads(path.read_text())["scratchpad"] == {"dir": "/tmp/pad"}


def test_set_refuses_a_wrong_value_or_key_in_one_line(agent_dir: Path) -> None:
    path = tools_json_path(agent_dir)
    path.write_text('{"search": {"count": 3}}')
    cases = {
        ("scratchpad.inlineChars", "lots"): "scratchpad.inlineChars: must be a whole number",
        (
            "gate.thresholds.block",
            "1.5",
        ): "gate.thresholds.block: must be between 0 and 1 (got 1.5)",
        ("braveApiKey", SECRET): "braveApiKey: set it with 'knightcode tools set-key brave'",
        ("nosuch.key", "1"): "nosuch.key: not a setting (known: search.baseUrl, search.count",
    }
    for (key, value), message in cases.items():
        done = knightcode("tools", "set", key, value)
        assert done.returncode == 2, (key, done.stderr)
        assert done.stderr.startswith(f"knightcode: error: {path}: {message}"), done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert SECRET not in done.stderr
    assert path.read_text() == '{"search": {"count": 3}}'


def test_set_needs_the_plugin(agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:web-tools"]}))
    done = knightcode("tools", "set", "codemode.enabled", "true")
    assert done.returncode == 2 and "builtin:web-tools is not loaded" in done.stderr
    assert not tools_json_path(agent_dir).exists()


def rows_of(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, object]]:
    assert done.returncode == 0, done.stderr
    return {str(row["name"]): row for row in json.loads(done.stdout)}


def test_enable_and_disable_write_the_user_settings_and_list_honours_them(
    agent_dir: Path,
) -> None:
    settings = agent_dir / "settings.json"
    settings.write_text(json.dumps({"theme": "dark", "tools": {"outsideWorkspace": "ask"}}))
    before = rows_of(knightcode("tools", "list", "--json"))
    assert before["web_fetch"]["enabled"] is True and before["grep"]["enabled"] is False

    done = knightcode("tools", "disable", "web_fetch")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"web_fetch: off in new sessions (tools.enabled in {settings})\n"
    assert knightcode("tools", "enable", "grep").returncode == 0
    assert json.loads(settings.read_text()) == {
        "theme": "dark",
        "tools": {"outsideWorkspace": "ask", "enabled": {"web_fetch": False, "grep": True}},
    }
    after = rows_of(knightcode("tools", "list", "--json"))
    assert after["web_fetch"] == {
        "name": "web_fetch",
        "origin": "builtin:web-tools",
        "enabled": False,
    }
    assert after["grep"]["enabled"] is True and after["web_search"]["enabled"] is True
    table = knightcode("tools", "list").stdout.splitlines()
    assert ["web_fetch", "builtin:web-tools", "off"] in [line.split() for line in table]
    assert knightcode("tools", "enable", "web_fetch").returncode == 0
    assert rows_of(knightcode("tools", "list", "--json"))["web_fetch"]["enabled"] is True


def test_an_unknown_tool_is_refused_with_the_known_ones(agent_dir: Path) -> None:
    for verb in ("enable", "disable"):
        done = knightcode("tools", verb, "web_fetchh")
        assert done.returncode == 2
        assert done.stderr == (
            "knightcode: error: unknown tool 'web_fetchh'; known: read, bash, edit, write, "
            "grep, find, ls, web_search, web_fetch, code\n"
        )
    assert not (agent_dir / "settings.json").exists()


def test_a_tool_of_a_plugin_that_is_off_can_be_enabled_with_a_hint(agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:web-tools"]}))
    done = knightcode("tools", "enable", "web_search")
    assert done.returncode == 0, done.stderr
    assert "its plugin builtin:web-tools is not loaded" in done.stdout
    assert rows_of(knightcode("tools", "list", "--json"))["web_search"]["enabled"] is False
