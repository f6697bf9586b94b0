"""tools.json: defaults, every section parsed, errors naming the file and key, 0600 writes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from knightcode import ConfigError
from knightcode_builtins.web_tools.config import (
    FetchConfig,
    GatePattern,
    ToolsConfig,
    ToolsConfigError,
    load_tools_config,
    tools_json_path,
    write_tools_json,
)


def test_no_file_gives_the_defaults(agent_dir: Path) -> None:
    config = load_tools_config(agent_dir)
    assert config == ToolsConfig()
    assert config.source is None
    assert config.gate.enabled is False and config.codemode.enabled is False
    assert config.fetch == FetchConfig()


def test_an_empty_file_gives_the_defaults(agent_dir: Path) -> None:
    tools_json_path(agent_dir).write_text("  \n")
    assert load_tools_config(agent_dir).search == ToolsConfig().search


def test_every_section_is_read(agent_dir: Path) -> None:
    write_tools_json(
        tools_json_path(agent_dir),
        {
            "braveApiKey": " key ",
            "search": {
                "baseUrl": "http://127.0.0.1:9/res/v1/",
                "count": 10,
                "country": "DE",
                "safeSearch": "strict",
                "freshness": "pw",
                "timeout": 3,
                "maxRetries": 0,
                "maxRetryWait": 1.5,
            },
            "fetch": {
                "connectTimeout": 2,
                "readTimeout": 4,
                "totalTimeout": 8,
                "maxBytes": 2048,
                "maxRedirects": 1,
                "allowPrivate": True,
                "allowHosts": ["localhost"],
            },
            "scratchpad": {"inlineChars": 100, "headChars": 10, "dir": "/tmp/pad"},
            "gate": {
                "enabled": True,
                "classifier": "llama.cpp/tiny",
                "patterns": [{"tool": "bash", "match": "rm -rf", "question": "deletes?"}],
                "thresholds": {"allow": 0.1, "block": 0.9},
            },
            "codemode": {"enabled": True, "timeout": 30, "maxOutputChars": 1000},
        },
    )
    config = load_tools_config(agent_dir)
    assert config.source == tools_json_path(agent_dir)
    assert config.brave_api_key == "key"
    assert config.search.base_url == "http://127.0.0.1:9/res/v1"
    assert (config.search.count, config.search.country, config.search.safe_search) == (
        10,
        "de",
        "strict",
    )
    assert (config.search.freshness, config.search.timeout) == ("pw", 3.0)
    assert (config.search.max_retries, config.search.max_retry_wait) == (0, 1.5)
    assert config.fetch == FetchConfig(2.0, 4.0, 8.0, 2048, 1, True, ("localhost",))
    assert (config.scratchpad.inline_chars, config.scratchpad.head_chars) == (100, 10)
    assert config.scratchpad.directory == "/tmp/pad"
    assert config.gate.enabled and config.gate.classifier == "llama.cpp/tiny"
    assert config.gate.patterns == (GatePattern("bash", "rm -rf", "deletes?"),)
    assert (config.gate.allow_below, config.gate.block_above) == (0.1, 0.9)
    assert config.codemode.enabled and config.codemode.timeout == 30.0
    assert config.codemode.max_output_chars == 1000


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"braveApikey": "x"}', "braveApikey: unknown key"),
        ('{"braveApiKey": 5}', "braveApiKey: must be a string"),
        ('{"search": []}', "search: must be an object"),
        ('{"search": {"count": 0}}', "search.count: must be between 1 and 20 (got 0)"),
        ('{"search": {"count": true}}', "search.count: must be a whole number"),
        (
            '{"search": {"baseUrl": "ftp://x"}}',
            "search.baseUrl: must be an http:// or https:// URL",
        ),
        ('{"search": {"safeSearch": "on"}}', "search.safeSearch: must be one of off, moderate"),
        ('{"search": {"country": "usa"}}', "search.country: must be a two-letter country code"),
        ('{"fetch": {"readTimeout": "1"}}', "fetch.readTimeout: must be a number"),
        ('{"fetch": {"allowPrivate": 1}}', "fetch.allowPrivate: must be true or false"),
        ('{"fetch": {"allowHosts": [1]}}', "fetch.allowHosts: must be a list of strings"),
        ('{"gate": {"patterns": [{"match": "x"}]}}', "gate.patterns[0].tool: is required"),
        ('{"gate": {"patterns": ["bash"]}}', "gate.patterns[0]: must be an object"),
        (
            '{"gate": {"thresholds": {"allow": 0.9, "block": 0.5}}}',
            "gate.thresholds.allow: must not be above thresholds.block (0.5)",
        ),
        ('{"codemode": {"enabled": "yes"}}', "codemode.enabled: must be true or false"),
        ('{"search": ', "invalid JSON at line 1 column 12"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_errors_name_the_file_and_the_key(agent_dir: Path, text: str, error: str) -> None:
    path = tools_json_path(agent_dir)
    path.write_text(text)
    with pytest.raises(ToolsConfigError) as caught:
        load_tools_config(agent_dir)
    assert str(caught.value).startswith(f"{path}: ")
    assert error in str(caught.value)
    assert isinstance(caught.value, ConfigError)  # the CLI reports it on one line, exit 2


def test_a_directory_is_refused(agent_dir: Path) -> None:
    tools_json_path(agent_dir).mkdir()
    with pytest.raises(ToolsConfigError, match="not a regular file"):
        load_tools_config(agent_dir)


def test_written_with_mode_0600_and_atomically(agent_dir: Path) -> None:
    path = tools_json_path(agent_dir)
    path.write_text("{}")
    os.chmod(path, 0o644)
    write_tools_json(path, {"braveApiKey": "secret"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_tools_config(agent_dir).brave_api_key == "secret"
    assert sorted(item.name for item in agent_dir.iterdir()) == ["tools.json"]  # no temp left


def test_a_failed_write_names_the_file_and_leaves_no_temporary(agent_dir: Path) -> None:
    path = tools_json_path(agent_dir)
    path.mkdir()  # the rename onto a directory fails, even for root
    (path / "keep").write_text("")
    with pytest.raises(ToolsConfigError, match=f"cannot write {path}"):
        write_tools_json(path, {"braveApiKey": "new"})
    assert sorted(item.name for item in agent_dir.iterdir()) == ["tools.json"]
    assert (path / "keep").exists()


def test_the_environment_key_is_the_fallback() -> None:
    assert ToolsConfig(brave_api_key="file").brave_key({"BRAVE_API_KEY": "env"}) == "file"
    assert ToolsConfig().brave_key({"BRAVE_API_KEY": " env "}) == "env"
    assert ToolsConfig().brave_key({"BRAVE_API_KEY": ""}) is None
