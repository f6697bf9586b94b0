"""MCP tools as knightcode tools: names ``mcp__<server>__<tool>`` (as Claude Code names them),
the server's input schema passed through, results as text and image blocks with structured
content appended as JSON text and kept in ``details``.

The tool list is needed when plugins register, before anything can wait on a server: it comes
from ``<agent-dir>/mcp/tools-cache.json`` (what each server listed the last time it started),
and only a server with no cached list (or a changed command or URL) is started to list them.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from knightcode import ToolDefinition

from .config import ServerConfig
from .manager import McpCallError, McpManager, ToolSpec

if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from knightcode import ToolContext, ToolResult, ToolResultContent

__all__ = [
    "cached_failure",
    "definitions_for",
    "read_cache",
    "to_tool_result",
    "tool_name",
    "write_cache",
]

_CACHE_LOCK = threading.Lock()
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64
"""Providers reject longer tool names."""


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` with characters providers refuse replaced by ``_``."""
    return _UNSAFE.sub("_", f"mcp__{server}__{tool}")[:MAX_NAME]


def _entry(path: Path, server: ServerConfig) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entry = data[server.name]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(entry, dict) or entry.get("fingerprint") != server.fingerprint():
        return None
    return entry


def read_cache(path: Path, server: ServerConfig) -> list[ToolSpec] | None:
    """The server's tools from the last run, or None when unknown or its config changed (a
    server whose listing failed has an empty list: see :func:`cached_failure`).
    """
    entry = _entry(path, server)
    try:
        tools = entry["tools"] if entry is not None else None
        if not isinstance(tools, list):
            return None
        return [ToolSpec(t["name"], t["description"], t["inputSchema"]) for t in tools]
    except (KeyError, TypeError):
        return None


def cached_failure(path: Path, server: ServerConfig) -> str | None:
    """Why the server's last listing failed, if it did: the next starts do not wait on it
    again, they retry it in the background.
    """
    entry = _entry(path, server)
    failed = entry.get("failed") if entry is not None else None
    return failed if isinstance(failed, str) else None


def write_cache(
    path: Path, servers: list[tuple[ServerConfig, list[ToolSpec]]], failed: str | None = None
) -> None:
    """Record the servers' tool lists for the next start (atomically; other entries kept);
    ``failed``: the listing failed, for this reason (the list is then empty).
    """
    with _CACHE_LOCK:  # the servers' loop and the start both write it
        _write_cache(path, servers, failed)


def _write_cache(
    path: Path, servers: list[tuple[ServerConfig, list[ToolSpec]]], failed: str | None
) -> None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    for server, tools in servers:
        data[server.name] = {
            "fingerprint": server.fingerprint(),
            **({"failed": failed} if failed else {}),
            "tools": [
                {"name": t.name, "description": t.description, "inputSchema": dict(t.input_schema)}
                for t in tools
            ],
        }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    tmp.replace(path)


def to_tool_result(server: str, tool: str, result: CallToolResult) -> ToolResult:
    """Text and images as blocks; other content (resources, audio) as a line of text;
        structured content as JSON text when no text block carries it (servers send both, the
    text for clients like this one). A result the server marks as an error raises, so the
        model sees it as a failed call.
    """
    content: list[ToolResultContent] = []
    for block in result.content:
        if block.type == "text":
            content.append({"type": "text", "text": block.text})
        elif block.type == "image":
            content.append({"type": "image", "data": block.data, "mimeType": block.mime_type})
        else:
            content.append({"type": "text", "text": f"[{block.type} content from {server}]"})
    structured = result.structured_content
    if structured is not None and not any(c["type"] == "text" for c in content):
        content.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    if result.is_error:
        text = "\n".join(c["text"] for c in content if c["type"] == "text")
        raise McpCallError(text or f"{tool} failed")
    if not content:
        content.append({"type": "text", "text": "(no output)"})
    return {
        "content": content,
        "details": {"server": server, "tool": tool, "structured": structured},
    }


class Servers(Protocol):
    """What a tool needs of the runtime: the connections, and whether the project is trusted."""

    manager: McpManager
    project_trusted: bool


def _definition(servers: Servers, server: ServerConfig, spec: ToolSpec) -> ToolDefinition:
    async def execute(
        tool_call_id: str, args: dict[str, object], ctx: ToolContext, on_update: object
    ) -> ToolResult:
        if server.project and not servers.project_trusted:
            raise McpCallError(
                f"MCP server '{server.name}' is a project server and the project is not "
                "trusted ('knightcode trust')"
            )
        result = await ctx.signal.guard(servers.manager.call(server.name, spec.name, args))
        return to_tool_result(server.name, spec.name, result)

    schema: Mapping[str, object] = spec.input_schema or {"type": "object", "properties": {}}
    return ToolDefinition(
        name=tool_name(server.name, spec.name),
        label=f"{server.name}: {spec.name}",
        description=spec.description or f"{spec.name} (MCP server {server.name})",
        parameters=schema,
        execute=execute,
        # A stdio server runs through the session's backend (in the sandbox) unless mcp.json
        # says "sandbox": false; an HTTP server is reached from this machine.
        host_access=server.transport == "http" or not server.sandbox,
        # A project's server is offered once session_start has seen the project is trusted.
        default_active=not server.project,
    )


def definitions_for(
    servers: Servers, tools: list[tuple[ServerConfig, list[ToolSpec]]]
) -> list[ToolDefinition]:
    """One definition per tool; a name that two servers share keeps the first."""
    seen: set[str] = set()
    out: list[ToolDefinition] = []
    for server, specs in tools:
        for spec in specs:
            definition = _definition(servers, server, spec)
            if definition.name not in seen:
                seen.add(definition.name)
                out.append(definition)
    return out
