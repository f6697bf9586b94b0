"""mcp.json: parsing, ``${VAR}`` expansion, and errors that name the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knightcode_builtins.mcp.config import McpConfigError, load_servers, read_mcp_json
from knightcode_builtins.mcp.tools import tool_name


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_stdio_and_http_entries_with_expansion(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "fs": {
                    "command": "npx",
                    "args": ["-y", "${PKG}"],
                    "env": {"TOKEN": "${TOKEN}", "MODE": "${MODE:-fast}"},
                    "startup": "eager",
                    "timeout": 5,
                    "sandbox": False,
                },
                "web": {
                    "url": "https://example.com/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                    "enabled": False,
                },
            }
        },
    )
    fs, web = read_mcp_json(path, {"PKG": "server-fs", "TOKEN": "t0k"})
    assert (fs.transport, fs.command, fs.args) == ("stdio", "npx", ("-y", "server-fs"))
    assert dict(fs.env) == {"TOKEN": "t0k", "MODE": "fast"}
    assert (fs.startup, fs.timeout, fs.enabled, fs.sandbox) == ("eager", 5.0, True, False)
    assert (web.transport, dict(web.headers), web.enabled) == (
        "http",
        {"Authorization": "Bearer t0k"},
        False,
    )
    assert (web.startup, web.timeout, web.sandbox) == ("lazy", 30.0, True)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({}, "mcpServers.s.command: give either 'command' (stdio) or 'url'"),
        ({"command": "x", "url": "http://a"}, "mcpServers.s.command: give either"),
        ({"url": "ftp://a"}, "mcpServers.s.url: must be an http or https URL"),
        ({"command": "x", "args": "a b"}, "mcpServers.s.args: must be a list of strings"),
        ({"command": "x", "env": {"A": 1}}, "mcpServers.s.env.A: must be a string"),
        ({"command": "x", "enabled": "yes"}, "mcpServers.s.enabled: must be true or false"),
        ({"command": "x", "startup": "now"}, "mcpServers.s.startup: must be 'lazy' or 'eager'"),
        ({"command": "x", "timeout": 0}, "mcpServers.s.timeout: must be a positive number"),
        ({"command": "x", "sandbox": "no"}, "mcpServers.s.sandbox: must be true or false"),
        ("npx", "mcpServers.s: must be an object"),
    ],
)
def test_invalid_entries_name_file_and_key(tmp_path: Path, entry: object, message: str) -> None:
    path = write(tmp_path / "mcp.json", {"mcpServers": {"s": entry}})
    with pytest.raises(McpConfigError) as error:
        read_mcp_json(path, {})
    assert str(error.value).startswith(f"{path}: {message}")


def test_broken_json_and_missing_file(tmp_path: Path) -> None:
    assert read_mcp_json(tmp_path / "none.json") == []
    path = tmp_path / "mcp.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(McpConfigError, match=r"mcp\.json: not valid JSON"):
        read_mcp_json(path)


def test_project_servers_are_marked_and_cannot_take_a_user_name(tmp_path: Path) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    write(agent / "mcp.json", {"mcpServers": {"a": {"command": "user-a"}}})
    write(
        project / ".knightcode" / "mcp.json",
        {"mcpServers": {"a": {"command": "project-a"}, "b": {"command": "project-b"}}},
    )
    servers, errors = load_servers(agent, project)
    assert [(s.name, s.command, s.project) for s in servers] == [
        ("a", "user-a", False),
        ("b", "project-b", True),
    ]
    assert errors == [
        f"{project / '.knightcode' / 'mcp.json'}: mcpServers.a: a user server has this name; "
        "ignored"
    ]
    assert [s.name for s in load_servers(agent, None)[0]] == ["a"]


def test_tool_names_are_namespaced_and_safe() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("my server", "a.b/c") == "mcp__my_server__a_b_c"
    assert len(tool_name("s" * 80, "t")) == 64
