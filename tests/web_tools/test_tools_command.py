"""``/tools`` in process: the tools.json edits it makes (``edit.py``) and what it does when
nobody can answer. The menu itself is driven over RPC (``test_tools_command_rpc.py``) and in
tmux (``tests/interactive/test_e2e_tools.py``).
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from knightcode_builtins.web_tools.config import (
    ToolsConfigError,
    load_tools_config,
    tools_json_path,
)
from knightcode_builtins.web_tools.edit import parse_value, set_value, settable_keys
from tests.harness import Builder


def test_every_setting_show_prints_is_settable_but_the_key() -> None:
    keys = settable_keys()
    assert "braveApiKey" not in keys and "file" not in keys
    assert keys["scratchpad.inlineChars"] == 40_000
    assert keys["gate.thresholds.block"] == 0.8
    assert keys["codemode.enabled"] is False
    assert keys["scratchpad.dir"] is None


@pytest.mark.parametrize(
    ("key", "text", "value"),
    [
        ("scratchpad.inlineChars", "20000", 20000),
        ("scratchpad.inlineChars", " lots ", "lots"),  # refused later, with the file's message
        ("gate.thresholds.allow", "0.5", 0.5),
        ("codemode.enabled", "true", True),
        ("fetch.allowHosts", '["a.example", "10.0.0.0/8"]', ["a.example", "10.0.0.0/8"]),
        ("scratchpad.dir", "123", "123"),  # a text setting takes the text as typed
        ("search.country", "de", "de"),
        ("scratchpad.headChars", "null", None),
        ("scratchpad.dir", "null", None),
    ],
)
def test_typed_text_becomes_the_stored_value(key: str, text: str, value: object) -> None:
    assert parse_value(key, text) == value


def test_set_value_keeps_the_rest_and_a_default_leaves_no_empty_section(agent_dir: Path) -> None:
    path = tools_json_path(agent_dir)
    path.write_text(json.dumps({"braveApiKey": "k", "gate": {"thresholds": {"block": 0.9}}}))
    path.chmod(0o644)
    set_value(agent_dir, "gate.thresholds.allow", 0.1)
    assert json.loads(path.read_text()) == {
        "braveApiKey": "k",
        "gate": {"thresholds": {"block": 0.9, "allow": 0.1}},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    set_value(agent_dir, "gate.thresholds.allow", None)
    set_value(agent_dir, "gate.thresholds.block", None)
    assert json.loads(path.read_text()) == {"braveApiKey": "k"}
    assert load_tools_config(agent_dir).gate.block_above == 0.8


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "scratchpad.headChars",
            -1,
            "scratchpad.headChars: must be between 0 and 100000000 (got -1)",
        ),
        ("codemode.enabled", "yes", "codemode.enabled: must be true or false"),
        (
            "scratchpad.inlinechars",
            5,
            "scratchpad.inlinechars: not a setting (known: search.baseUrl",
        ),
        ("braveApiKey", "k", "braveApiKey: set it with 'knightcode tools set-key brave' or /tools"),
    ],
)
def test_a_wrong_value_names_the_file_and_key_and_writes_nothing(
    agent_dir: Path, key: str, value: object, message: str
) -> None:
    path = tools_json_path(agent_dir)
    path.write_text('{"search": {"count": 3}}')
    with pytest.raises(ToolsConfigError) as caught:
        set_value(agent_dir, key, value)
    assert str(caught.value).startswith(f"{path}: {message}")
    assert path.read_text() == '{"search": {"count": 3}}'


def test_a_broken_file_is_reported_before_any_change(agent_dir: Path) -> None:
    path = tools_json_path(agent_dir)
    path.write_text('{"search": {"count": 0}}')
    with pytest.raises(ToolsConfigError, match=r"search\.count: must be between 1 and 20"):
        set_value(agent_dir, "scratchpad.inlineChars", 100)
    assert path.read_text() == '{"search": {"count": 0}}'


async def test_without_anyone_to_answer_it_says_where_to_go(
    scenario: Builder, capsys: pytest.CaptureFixture[str]
) -> None:
    run = await scenario(builtin_plugins=("web-tools",))
    assert not run.ctx.has_ui  # a --mode json session
    command = run.host.registrations.commands.get("tools")
    assert command is not None
    await command.handler("", run.ctx)
    assert "use 'knightcode tools' (list, enable, disable, set, set-key, show)" in (
        capsys.readouterr().err
    )
