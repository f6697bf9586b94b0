"""The plugin's state for one knightcode process: the servers of mcp.json, their manager and
the tools registered for them; and the report ``/mcp`` and ``knightcode mcp list`` print.
"""

from __future__ import annotations

import atexit
import concurrent.futures
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from knightcode import ToolDefinition

if TYPE_CHECKING:
    from knightcode import ExecutionBackend

from .config import ServerConfig, load_servers
from .manager import McpManager, ServerState, ToolSpec
from .tools import cached_failure, definitions_for, read_cache, tool_name, write_cache

__all__ = [
    "Runtime",
    "activate_project",
    "current",
    "probe",
    "start",
    "status_lines",
    "status_rows",
]


@dataclass
class Runtime:
    """The servers, their connections and what was registered at start."""

    agent_dir: Path
    manager: McpManager
    config_errors: list[str]
    registered: dict[str, list[ToolSpec]] = field(default_factory=dict)
    project_trusted: bool = False

    @property
    def cache_path(self) -> Path:
        """Where the servers' tool lists are kept between runs."""
        return cache_path(self.agent_dir)


def cache_path(agent_dir: Path) -> Path:
    """``<agent-dir>/mcp/tools-cache.json``."""
    return agent_dir / "mcp" / "tools-cache.json"


_current: Runtime | None = None


def current() -> Runtime | None:
    """The runtime of this process, once ``register_tools`` ran."""
    return _current


def start(agent_dir: Path, cwd: Path) -> tuple[Runtime, list[ToolDefinition]]:
    """Read mcp.json, take each enabled server's tools from the cache, start the user's servers
    that have none cached (waiting at most their timeout, side by side) and the eager ones (in
    the background), and build the tool definitions.

    A project's servers are not started here: trust is not known yet (``register_tools`` has no
    context). Their cached tools are registered switched off; ``session_start`` switches them
    on and starts the servers when the project is trusted (see :func:`activate_project`).
    """
    global _current
    servers, errors = load_servers(agent_dir, cwd)
    path = cache_path(agent_dir)

    def remember(server: ServerConfig, tools: list[ToolSpec]) -> None:
        write_cache(path, [(server, tools)])

    manager = McpManager(
        servers, agent_dir / "mcp" / "logs", on_tools=remember, backend_pending=True
    )
    runtime = Runtime(agent_dir, manager, errors)
    enabled = [s for s in servers if s.enabled]
    user = [s for s in enabled if not s.project]
    cold = [s for s in user if read_cache(path, s) is None]
    # Eager servers, and those whose last listing failed (retried without waiting on them).
    background = [
        s
        for s in user
        if s not in cold and (s.startup == "eager" or cached_failure(path, s) is not None)
    ]
    if cold:
        # Only a server never listed (or changed) is waited on, at most its timeout; one that
        # fails is recorded so the next start does not wait on it again.
        with suppress(concurrent.futures.TimeoutError):
            cold_names = [s.name for s in cold]
            manager.start_all(cold_names, before_session=True).result(
                max(s.timeout for s in cold) + 6
            )
        for server in cold:
            state = manager.states[server.name]
            if state.tools is None:
                write_cache(path, [(server, [])], failed=state.error or "did not start")
    if background:
        manager.start_all([s.name for s in background])
    for server in enabled:
        state = manager.states[server.name]
        tools = state.tools if state.tools is not None else read_cache(path, server)
        runtime.registered[server.name] = tools or []
    definitions = definitions_for(runtime, [(s, runtime.registered[s.name]) for s in enabled])
    _current = runtime
    atexit.register(manager.close)
    return runtime, definitions


def _state_line(state: ServerState, registered: list[ToolSpec] | None) -> str:
    cfg = state.config
    where = " ".join([cfg.command or "", *cfg.args]) if cfg.transport == "stdio" else cfg.url
    count = len(registered or [])
    line = f"{cfg.name} [{state.status}] {cfg.transport} {where} — {count} tools ({cfg.startup})"
    if state.error:
        line += f"\n  error: {state.error}"
    if state.tools is not None and registered is not None:
        new = {t.name for t in state.tools} - {t.name for t in registered}
        if new:
            line += f"\n  new tools from the next start: {', '.join(sorted(new))}"
    return line


def status_lines(runtime: Runtime, *, with_errors: bool = True) -> list[str]:
    """Servers, status, tools and errors, for ``/mcp`` and ``knightcode mcp list``.

    :param with_errors: start with mcp.json's errors (the CLI prints them to stderr instead)
    """
    lines = [f"config error: {e}" for e in runtime.config_errors] if with_errors else []
    states = runtime.manager.states
    if not states:
        lines.append(f"No MCP servers configured ({runtime.agent_dir / 'mcp.json'}).")
    for name, state in states.items():
        registered = runtime.registered.get(name)
        lines.append(_state_line(state, registered))
        for spec in registered or []:
            summary = spec.description.splitlines()[0][:80] if spec.description else ""
            lines.append(f"  {tool_name(name, spec.name)}  {summary}".rstrip())
    return lines


def project_servers(runtime: Runtime) -> list[ServerConfig]:
    """The enabled servers of the project's mcp.json."""
    return [
        s.config for s in runtime.manager.states.values() if s.config.project and s.config.enabled
    ]


def activate_project(runtime: Runtime, trusted: bool) -> list[str]:
    """Trusted: start the project's servers that are eager or have no cached tools (in the
    background) and return the names of their registered tools to switch on. Untrusted: none.
    """
    runtime.project_trusted = trusted
    servers = project_servers(runtime)
    if not trusted or not servers:
        return []
    path = runtime.cache_path
    start_now = [s.name for s in servers if s.startup == "eager" or read_cache(path, s) is None]
    if start_now:
        runtime.manager.start_all(start_now)
    return [tool_name(s.name, t.name) for s in servers for t in runtime.registered.get(s.name, [])]


def probe(
    agent_dir: Path, cwd: Path, trusted: bool, backend: ExecutionBackend | None = None
) -> Runtime:
    """Start every enabled server (the project's only when ``trusted``), wait for each to be up
    or failed, and record their tools in the cache: what ``knightcode mcp list`` shows (and a
    way to list a new project server's tools before its first session).

    :param backend: where stdio servers run (a sandbox, as in a session); None: this machine
    """
    servers, errors = load_servers(agent_dir, cwd if trusted else None)
    path = cache_path(agent_dir)

    def remember(server: ServerConfig, tools: list[ToolSpec]) -> None:
        write_cache(path, [(server, tools)])

    manager = McpManager(servers, agent_dir / "mcp" / "logs", on_tools=remember)
    manager.use_backend(backend)
    runtime = Runtime(agent_dir, manager, errors, project_trusted=trusted)
    enabled = [s for s in servers if s.enabled]
    if enabled:
        with suppress(concurrent.futures.TimeoutError):
            manager.start_all([s.name for s in enabled]).result(max(s.timeout for s in enabled) + 6)
    for server in enabled:
        runtime.registered[server.name] = manager.states[server.name].tools or []
    return runtime


def status_rows(runtime: Runtime) -> list[dict[str, object]]:
    """``knightcode mcp list --json``: one object per server."""
    rows: list[dict[str, object]] = []
    for name, state in runtime.manager.states.items():
        cfg = state.config
        rows.append(
            {
                "name": name,
                "source": str(cfg.source),
                "transport": cfg.transport,
                "status": state.status,
                "error": state.error,
                "tools": [tool_name(name, t.name) for t in runtime.registered.get(name, [])],
            }
        )
    return rows
