"""The plugin's state for one knightcode process: the servers of mcp.json, their manager and
the tools registered for them; and the report ``/mcp`` and ``knightcode mcp list`` print.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import os
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from knightcode import ToolDefinition

from .config import ServerConfig, load_servers
from .manager import McpManager, ServerState, ToolSpec
from .tools import definitions_for, read_cache, tool_name, write_cache

__all__ = ["Runtime", "current", "default_agent_dir", "start", "status_lines"]

AGENT_DIR_ENV = "KNIGHTCODE_CODING_AGENT_DIR"


def default_agent_dir() -> Path:
    """The agent directory as the kernel resolves it. ``register_tools`` gets no context, so
    the plugin reads the same variable (kept in step with ``knightcode``'s own rule).
    """
    value = os.environ.get(AGENT_DIR_ENV, "")
    return Path(os.path.expanduser(value)) if value else Path.home() / ".knightcode" / "agent"


@dataclass
class Runtime:
    """The servers, their connections and what was registered at start."""

    agent_dir: Path
    manager: McpManager
    config_errors: list[str]
    registered: dict[str, list[ToolSpec]] = field(default_factory=dict)

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


def start(agent_dir: Path, *, cold_wait: bool = True) -> tuple[Runtime, list[ToolDefinition]]:
    """Read mcp.json, take each enabled server's tools from the cache, start the servers that
    have none cached (waiting at most their timeout, side by side) and the eager ones (in the
    background), and build the tool definitions.
    """
    global _current
    servers, errors = load_servers(agent_dir, None)
    path = cache_path(agent_dir)

    def remember(server: ServerConfig, tools: list[ToolSpec]) -> None:
        write_cache(path, [(server, tools)])

    manager = McpManager(servers, agent_dir / "mcp" / "logs", on_tools=remember)
    runtime = Runtime(agent_dir, manager, errors)
    enabled = [s for s in servers if s.enabled]
    cold = [s for s in enabled if read_cache(path, s) is None]
    eager = [s for s in enabled if s.startup == "eager" and s not in cold]
    if cold or eager:
        started = manager.start_all([s.name for s in cold + eager])
        if cold and cold_wait:
            wait = max(s.timeout for s in cold) + 6
            # Each server's own timeout marks it failed; this only bounds the wait.
            with suppress(concurrent.futures.TimeoutError):
                started.result(timeout=wait)
    for server in enabled:
        state = manager.states[server.name]
        tools = state.tools if state.tools is not None else read_cache(path, server)
        runtime.registered[server.name] = tools or []
    definitions = definitions_for(
        lambda: runtime.manager, [(s, runtime.registered[s.name]) for s in enabled]
    )
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


def status_lines(runtime: Runtime, *, with_tools: bool = True) -> list[str]:
    """Servers, status, tools and errors, for ``/mcp`` and ``knightcode mcp list``."""
    lines = [f"config error: {e}" for e in runtime.config_errors]
    states = runtime.manager.states
    if not states:
        lines.append(f"No MCP servers configured ({runtime.agent_dir / 'mcp.json'}).")
    for name, state in states.items():
        registered = runtime.registered.get(name)
        lines.append(_state_line(state, registered))
        if with_tools:
            for spec in registered or []:
                summary = spec.description.splitlines()[0][:80] if spec.description else ""
                lines.append(f"  {tool_name(name, spec.name)}  {summary}".rstrip())
    return lines
