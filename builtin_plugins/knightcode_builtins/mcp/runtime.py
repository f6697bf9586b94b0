"""The plugin's state for one knightcode process: the servers of mcp.json, their manager and
the tools registered for them; and the report ``/mcp`` and ``knightcode mcp list`` print.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import functools
from collections.abc import Callable
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
    "start_servers",
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
    pending: dict[str, concurrent.futures.Future[list[ServerState]]] = field(default_factory=dict)
    """First listings still running: the next headless run waits for them (at most their
    timeout); an interactive run does not."""
    told_starting: set[str] = field(default_factory=set)
    """Servers an interactive run was told are still starting (each is told once)."""
    on_change: Callable[[str], None] | None = None
    """Told (from the servers' thread) the name of a server whose tools or status changed."""

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
    """Read mcp.json, take each enabled server's tools from the cache, start in the background
    the user's servers that have none cached (their tools are added to the session when their
    list arrives: ``live.py``) and the eager ones, and build the tool definitions. Nothing here
    waits on a server.

    A project's servers are not started here: trust is not known yet (``register_tools`` has no
    context). Their cached tools are registered switched off; ``session_start`` switches them
    on and starts the servers when the project is trusted (see :func:`activate_project`).
    """
    global _current
    servers, errors = load_servers(agent_dir, cwd)
    runtime = Runtime(agent_dir, McpManager([], agent_dir / "mcp" / "logs"), errors)
    runtime.manager = McpManager(
        servers,
        agent_dir / "mcp" / "logs",
        on_tools=lambda s, t: _listed(runtime, s, t),
        backend_pending=True,  # stdio servers wait for the session's backend (the sandbox)
    )
    enabled = [s for s in servers if s.enabled]
    start_servers(runtime, [s for s in enabled if not s.project])
    for server in enabled:
        runtime.registered.setdefault(server.name, read_cache(runtime.cache_path, server) or [])
    definitions = definitions_for(runtime, [(s, runtime.registered[s.name]) for s in enabled])
    _current = runtime
    atexit.register(runtime.manager.close)
    return runtime, definitions


def start_servers(runtime: Runtime, servers: list[ServerConfig]) -> None:
    """Start in the background the servers with no cached tools (the first run waits for their
    list: ``runtime.pending``), the eager ones and those whose last listing failed.
    """
    path = runtime.cache_path
    for server in servers:
        cold = read_cache(path, server) is None
        if not cold and server.startup != "eager" and cached_failure(path, server) is None:
            continue
        future = runtime.manager.start_all([server.name])
        if cold:
            runtime.pending[server.name] = future
        future.add_done_callback(functools.partial(_started, runtime, server))


def _listed(runtime: Runtime, server: ServerConfig, tools: list[ToolSpec]) -> None:
    """A server listed its tools (on the servers' loop): cache them, tell the session."""
    write_cache(runtime.cache_path, [(server, tools)])
    if runtime.on_change is not None:
        runtime.on_change(server.name)


def _started(runtime: Runtime, server: ServerConfig, _done: object = None) -> None:
    """A background start ended; a failed one is cached, so the next start does not wait."""
    state = runtime.manager.states.get(server.name)
    if state is None or state.config is not server or state.status != "failed":
        return  # listed, removed by /reload, or stopped on the way out (not a failure)
    write_cache(runtime.cache_path, [(server, [])], failed=state.error or "did not start")
    if runtime.on_change is not None:
        runtime.on_change(server.name)


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
            line += f"\n  new tools from the next run: {', '.join(sorted(new))}"
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
    background: :func:`start_servers`) and return the names of their registered tools to switch
    on. Untrusted: none.
    """
    runtime.project_trusted = trusted
    servers = project_servers(runtime)
    if not trusted or not servers:
        return []
    start_servers(runtime, servers)
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
