"""``mcp.json``: the MCP servers, in the format other agents already use.

``{"mcpServers": {"name": {"command", "args", "env", "cwd", "sandbox"} | {"url", "headers"},
"enabled", "startup": "lazy" | "eager", "timeout": seconds}}``. ``"sandbox": false`` runs a stdio
server on this machine even when the session's tools run in a sandbox (the default: inside).
Strings may hold ``${VAR}`` (and ``${VAR:-default}``), expanded from the environment when the
file is read, so a token can stay out of the file. Errors name the file and the key and never
end in a traceback.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

__all__ = [
    "DEFAULT_TIMEOUT",
    "McpConfigError",
    "ServerConfig",
    "load_servers",
    "read_mcp_json",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds a server gets to start (and list its tools) and each call gets to answer."""

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpConfigError(Exception):
    """mcp.json is unreadable or invalid; the message reads ``<file>: <key>: <why>``."""


@dataclass(frozen=True)
class ServerConfig:
    """One server of mcp.json. ``command`` set: stdio; ``url`` set: streamable HTTP.

    :param source: the file it came from (shown by ``/mcp`` and ``knightcode mcp list``)
    :param project: from a project's ``.knightcode/mcp.json``: started only when it is trusted
    :param sandbox: a stdio server runs through the session's execution backend (inside the
        sandbox when one is on); False: on this machine, like a tool with ``host_access``
    """

    name: str
    source: Path
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    startup: Literal["lazy", "eager"] = "lazy"
    timeout: float = DEFAULT_TIMEOUT
    project: bool = False
    sandbox: bool = True

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``stdio`` (a command) or ``http`` (streamable HTTP at a URL)."""
        return "stdio" if self.command is not None else "http"

    def fingerprint(self) -> str:
        """What the tool cache is keyed on: a changed command or URL lists the tools anew."""
        parts = [self.command or "", *self.args, self.cwd or "", self.url or ""]
        return json.dumps(parts)


def _expand(value: str, environ: Mapping[str, str]) -> str:
    return _VAR.sub(lambda m: environ.get(m.group(1), m.group(2) or ""), value)


class _Reader:
    """Checks one server entry; every error names the file and the dotted key."""

    def __init__(self, path: Path, name: str, entry: Mapping[str, object]) -> None:
        self.path, self.name, self.entry = path, name, entry

    def fail(self, key: str, why: str) -> McpConfigError:
        return McpConfigError(f"{self.path}: mcpServers.{self.name}.{key}: {why}")

    def string(self, key: str, environ: Mapping[str, str]) -> str | None:
        value = self.entry.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise self.fail(key, "must be a non-empty string")
        return _expand(value, environ)

    def strings(self, key: str, environ: Mapping[str, str]) -> tuple[str, ...]:
        value = self.entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "must be a list of strings")
        return tuple(_expand(v, environ) for v in value if isinstance(v, str))

    def table(self, key: str, environ: Mapping[str, str]) -> dict[str, str]:
        value = self.entry.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, "must be an object of strings")
        table: dict[str, str] = {}
        for k, v in value.items():
            if not isinstance(v, str):
                raise self.fail(f"{key}.{k}", "must be a string")
            table[str(k)] = _expand(v, environ)
        return table


def _server(path: Path, name: str, entry: object, environ: Mapping[str, str]) -> ServerConfig:
    if not isinstance(entry, dict):
        raise McpConfigError(f"{path}: mcpServers.{name}: must be an object")
    r = _Reader(path, name, entry)
    command, url = r.string("command", environ), r.string("url", environ)
    if (command is None) == (url is None):
        raise r.fail("command", "give either 'command' (stdio) or 'url' (streamable HTTP)")
    if url is not None and not url.startswith(("http://", "https://")):
        raise r.fail("url", f"must be an http or https URL, got {url!r}")
    enabled = entry.get("enabled", True)
    if not isinstance(enabled, bool):
        raise r.fail("enabled", "must be true or false")
    startup = entry.get("startup", "lazy")
    if startup not in ("lazy", "eager"):
        raise r.fail("startup", f"must be 'lazy' or 'eager', got {startup!r}")
    sandbox = entry.get("sandbox", True)
    if not isinstance(sandbox, bool):
        raise r.fail("sandbox", "must be true or false")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise r.fail("timeout", "must be a positive number of seconds")
    return ServerConfig(
        name=name,
        source=path,
        command=command,
        args=r.strings("args", environ),
        env=r.table("env", environ),
        cwd=r.string("cwd", environ),
        url=url,
        headers=r.table("headers", environ),
        enabled=enabled,
        startup="eager" if startup == "eager" else "lazy",
        timeout=float(timeout),
        sandbox=sandbox,
    )


def read_mcp_json(path: Path, environ: Mapping[str, str] | None = None) -> list[ServerConfig]:
    """The servers of one mcp.json (none when the file does not exist).

    :raises McpConfigError: the file is not JSON or an entry is invalid
    """
    env = os.environ if environ is None else environ
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as error:
        raise McpConfigError(f"{path}: cannot be read: {error.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise McpConfigError(f"{path}: not valid JSON: {error.msg} (line {error.lineno})") from None
    if not isinstance(data, dict):
        raise McpConfigError(f"{path}: must hold a JSON object")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(f"{path}: mcpServers: must be an object of servers")
    return [_server(path, str(name), entry, env) for name, entry in servers.items()]


def load_servers(agent_dir: Path, project_dir: Path | None) -> tuple[list[ServerConfig], list[str]]:
    """The servers of ``<agent-dir>/mcp.json`` and, when given, of the project's
    ``.knightcode/mcp.json`` (marked ``project``; whether to use them is for the caller, who
    knows the trust). A project server named like a user one is left out: a repository cannot
    take over a server the user set up.

    :returns: the servers, and the errors of files that could not be used (one line each)
    """
    errors: list[str] = []
    servers: list[ServerConfig] = []
    try:
        servers = read_mcp_json(agent_dir / "mcp.json")
    except McpConfigError as error:
        errors.append(str(error))
    if project_dir is None:
        return servers, errors
    path = project_dir / ".knightcode" / "mcp.json"
    try:
        project = read_mcp_json(path)
    except McpConfigError as error:
        return servers, [*errors, str(error)]
    taken = {s.name for s in servers}
    for server in project:
        if server.name in taken:
            errors.append(f"{path}: mcpServers.{server.name}: a user server has this name; ignored")
        else:
            servers.append(replace(server, project=True))
    return servers, errors
