"""The MCP servers' connections, each in its own task on one background event loop.

Why a thread of its own: the SDK's transports are anyio task groups that must be entered and
left in the same task, a server can hang in its handshake, and the tool list is needed while
plugins register (before the agent's loop runs). Each server is one long-lived task holding its
transport and ``ClientSession``; a server that fails to start, hangs or dies is marked
``failed`` with its error and the agent's loop only ever waits on it with a timeout. A call to
a server that is not running starts it again (lazy start, and restart after a crash).

Where a stdio server runs (``_placement.py``): through the session's execution backend, so
inside the sandbox when one is on (``"sandbox": false`` in mcp.json: on this machine). The
backend is known once the session starts (:meth:`McpManager.use_backend`); a start before that
waits for it, except the listing of a never-listed server while plugins register, which runs
on this machine and is stopped when the session turns out to be sandboxed.

The ``mcp`` SDK is imported inside the loop's tasks, never when this module loads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from ._placement import Placement
from .config import ServerConfig

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.client._transport import TransportStreams
    from mcp.types import CallToolResult

    from knightcode import ExecutionBackend

__all__ = ["McpCallError", "McpManager", "ServerState", "ToolSpec", "describe_error", "innermost"]

_T = TypeVar("_T")

Status = Literal["idle", "starting", "ready", "failed", "disabled"]


class McpCallError(Exception):
    """A tool call that could not be made or did not finish; the message is for the model."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool a server offers, as it listed it (the schema is passed through as is)."""

    name: str
    description: str
    input_schema: Mapping[str, object]


@dataclass
class ServerState:
    """What ``/mcp`` and ``knightcode mcp list`` show of one server."""

    config: ServerConfig
    status: Status = "idle"
    error: str | None = None
    tools: list[ToolSpec] | None = None
    session: ClientSession | None = None
    task: asyncio.Task[None] | None = None
    stop: asyncio.Event | None = None
    ready: asyncio.Event | None = None
    log_path: Path | None = None
    extra: dict[str, str] = field(default_factory=dict)
    on_host: bool = False
    """Running on this machine although its tools' backend is not known yet (see module)."""
    before_session: bool = False
    """Started to list its tools while plugins register: may run before the backend is known."""


def _innermost(error: BaseException) -> BaseException:
    """The first leaf of an exception group (the SDK's task groups wrap their errors)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _connection_lost(error: BaseException) -> bool:
    """Whether the error says the server is gone (not that one call failed)."""
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import CONNECTION_CLOSED

    error = _innermost(error)
    if isinstance(error, MCPError):
        return error.code == CONNECTION_CLOSED
    return isinstance(error, OSError | EOFError)


def _one_line(error: BaseException) -> str:
    """An exception (or an SDK exception group) as one line: the innermost cause."""
    error = _innermost(error)
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def describe_error(error: BaseException) -> str:
    """An SDK error as one line for the user (the innermost cause of an exception group)."""
    return _one_line(error)


def innermost(error: BaseException) -> BaseException:
    """The first leaf of an exception group (the SDK's task groups wrap their errors)."""
    return _innermost(error)


def _log_tail(path: Path | None) -> str:
    """The server's last stderr line, which usually says why it died."""
    if path is None:
        return ""
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return f" (stderr: {lines[-1].strip()[:200]})" if lines else ""


class McpManager:
    """Connections to the configured servers; thread-safe entry points for the agent."""

    def __init__(
        self,
        servers: list[ServerConfig],
        log_dir: Path,
        on_tools: Callable[[ServerConfig, list[ToolSpec]], None] | None = None,
        *,
        backend_pending: bool = False,
    ) -> None:
        """:param backend_pending: a session will say where stdio servers run
        (:meth:`use_backend`) and starts wait for it; False: on this machine (the CLI)
        """
        self._on_tools = on_tools
        self.placement = Placement(pending=backend_pending)
        self.states: dict[str, ServerState] = {
            s.name: ServerState(s, status="idle" if s.enabled else "disabled") for s in servers
        }
        self._log_dir = log_dir
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._closing = False
        """Set by :meth:`close`: what goes wrong in a start after this is the shutdown's doing
        (an interpreter at exit refuses new threads and atexit handlers), not the server's."""

    # --- the background loop ------------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="knightcode-mcp", daemon=True
                )
                thread.start()
                self._loop = loop
            return self._loop

    def submit(self, coro: Coroutine[object, object, _T]) -> concurrent.futures.Future[_T]:
        """Run ``coro`` on the servers' loop."""
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())

    # --- one server ---------------------------------------------------------------------------

    async def _serve(self, state: ServerState) -> None:
        """Hold the server's connection until ``stop``; any failure is recorded, never raised."""
        from mcp import ClientSession

        cfg = state.config
        assert state.stop is not None and state.ready is not None
        try:
            async with AsyncExitStack() as stack:
                if cfg.transport == "stdio":
                    read, write = await stack.enter_async_context(await self._stdio(state))
                else:
                    read, write = await stack.enter_async_context(self._http(state))
                session = await stack.enter_async_context(
                    ClientSession(read, write, read_timeout_seconds=cfg.timeout)
                )
                await asyncio.wait_for(session.initialize(), cfg.timeout)
                listed = await asyncio.wait_for(session.list_tools(), cfg.timeout)
                state.tools = [
                    ToolSpec(t.name, t.description or "", dict(t.input_schema))
                    for t in listed.tools
                ]
                state.session, state.status, state.error = session, "ready", None
                if self._on_tools is not None:
                    self._on_tools(cfg, state.tools)
                state.ready.set()
                await state.stop.wait()
        except Exception as error:  # an SDK or transport error: recorded, not raised
            if self._closing:
                state.status = "idle"  # cut short by the exit: not held against the server
                return
            state.status = "failed"
            if isinstance(_innermost(error), TimeoutError):
                state.error = f"no answer within {cfg.timeout:g} s"
            else:
                state.error = _one_line(error)
            state.error += _log_tail(state.log_path)
        else:
            state.status = "idle"  # stopped on purpose (``_lost`` marks a broken one after)
        finally:
            state.session = None
            state.ready.set()

    async def _stdio(self, state: ServerState) -> AbstractAsyncContextManager[TransportStreams]:
        """The stdio transport, its command run where :class:`Placement` says; the server's
        stderr goes to a log file, not the terminal.
        """
        from mcp.client.stdio import stdio_client

        cfg = state.config
        params, state.on_host = await self.placement.parameters(cfg, state.before_session)
        self._log_dir.mkdir(parents=True, exist_ok=True)
        state.log_path = self._log_dir / f"{cfg.name}.log"
        errlog = state.log_path.open("w", encoding="utf-8")
        return stdio_client(params, errlog=errlog)

    def _http(self, state: ServerState) -> AbstractAsyncContextManager[TransportStreams]:
        """The streamable HTTP transport with the configured headers, and the stored OAuth
        login when there is one (``oauth.py``); a server that answers 401 is reported with the
        ``knightcode mcp login`` hint instead of the SDK's generic error.
        """
        # The log folder is <agent-dir>/mcp/logs; the logins live beside it.
        return _http_transport(self._log_dir.parent.parent, state.config)

    async def _start(self, name: str) -> ServerState:
        """The server connected (started if needed), or failed; waits at most its timeout."""
        state = self.states.get(name)
        if state is None:
            raise McpCallError(f"MCP server '{name}' was removed from mcp.json")
        if state.status == "disabled":
            return state
        if state.task is None or state.task.done():
            state.status, state.error = "starting", None
            state.stop, state.ready = asyncio.Event(), asyncio.Event()
            state.task = asyncio.get_running_loop().create_task(self._serve(state))
        assert state.ready is not None
        try:
            await asyncio.wait_for(state.ready.wait(), state.config.timeout + 5)
        except TimeoutError:
            state.status, state.error = "failed", "did not start in time"
        return state

    async def _call(self, name: str, tool: str, args: dict[str, object]) -> CallToolResult:
        state = await self._start(name)
        session = state.session
        if session is None or state.task is None:
            raise McpCallError(f"MCP server '{name}' is not available: {state.error}")
        call = asyncio.ensure_future(session.call_tool(tool, args))
        done, _ = await asyncio.wait(
            {call, state.task},
            timeout=state.config.timeout,
            return_when=asyncio.FIRST_COMPLETED,
        )
        if call in done:
            try:
                return _as_call_result(call.result())
            except McpCallError:
                raise
            except Exception as error:
                if not _connection_lost(error):
                    raise McpCallError(f"MCP server '{name}': {_one_line(error)}") from None
                await self._lost(state, error)
                raise McpCallError(
                    f"MCP server '{name}' stopped during the call: {state.error}"
                ) from None
        call.cancel()
        if state.task in done:
            raise McpCallError(f"MCP server '{name}' stopped during the call: {state.error}")
        raise McpCallError(
            f"MCP server '{name}' did not answer '{tool}' within {state.config.timeout:g} s"
        )

    async def _lost(self, state: ServerState, error: BaseException) -> None:
        """The connection broke: close what is left, record why; the next call restarts it."""
        if state.stop is not None:
            state.stop.set()
        if state.task is not None:
            await asyncio.wait({state.task}, timeout=5)
        state.status = "failed"
        state.error = f"{_one_line(error)}{_log_tail(state.log_path)}"

    # --- entry points -------------------------------------------------------------------------

    def start_all(
        self, names: list[str], *, before_session: bool = False
    ) -> concurrent.futures.Future[list[ServerState]]:
        """Start these servers side by side (their tools listed); done when each is up or failed.

        :param before_session: a listing while plugins register, which must not wait for the
            session's backend (see the module docstring)
        """
        for name in names:
            self.states[name].before_session = before_session

        async def run() -> list[ServerState]:
            return list(await asyncio.gather(*(self._start(n) for n in names)))

        return self.submit(run())

    def use_backend(self, backend: ExecutionBackend | None) -> None:
        """The session's execution backend: stdio servers run through it from now on. One that
        ran on this machine only for want of it is stopped when it is a sandbox; the next call
        starts it inside.
        """
        self.placement.decide(backend)
        if not self.placement.sandboxed:
            return
        moved = [s for s in self.states.values() if s.on_host and s.stop is not None]

        async def stop() -> None:
            for state in moved:
                assert state.stop is not None
                state.stop.set()
                if state.task is not None:
                    await asyncio.wait({state.task}, timeout=5)
                state.on_host = False

        if moved:  # waited on, so that no call reaches the server on its way out
            with suppress(concurrent.futures.TimeoutError):
                self.submit(stop()).result(6)

    async def call(self, name: str, tool: str, args: dict[str, object]) -> CallToolResult:
        """Call ``tool`` from the agent's loop; the work runs on the servers' loop."""
        return await asyncio.wrap_future(self.submit(self._call(name, tool, args)))

    def add_servers(self, servers: list[ServerConfig]) -> None:
        """Know these servers (not started yet); ``/reload`` found them in mcp.json."""
        fresh = {
            s.name: ServerState(s, status="idle" if s.enabled else "disabled") for s in servers
        }
        # A new dict, never changed in place: ``/mcp`` may be iterating the old one.
        self.states = {**self.states, **fresh}

    def forget(self, names: list[str]) -> concurrent.futures.Future[None] | None:
        """Stop these servers and forget them (removed, disabled or changed in mcp.json); the
        future is done when they stopped (None: none was running).
        """
        gone = [self.states[name] for name in names if name in self.states]
        self.states = {name: s for name, s in self.states.items() if name not in names}
        if self._loop is None or not any(s.task is not None for s in gone):
            return None
        return self.submit(self._stop(gone, 5.0))

    @staticmethod
    async def _stop(states: list[ServerState], timeout: float) -> None:
        for state in states:
            if state.stop is not None:
                state.stop.set()
            if state.task is not None and state.status == "starting":
                # Still in its handshake, so it never sees ``stop``: cancelled at once (which
                # ends its transport and so its process) rather than after the grace below,
                # so a run whose exit finds a server starting in the background ends soon.
                state.task.cancel()
        tasks = [s.task for s in states if s.task and not s.task.done()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=1)
            # One that did not end in time is cancelled too.
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Stop every server (their subprocesses end with their transports) and the loop."""
        loop = self._loop
        self._closing = True
        if loop is None:
            return
        with suppress(TimeoutError, concurrent.futures.TimeoutError):
            self.submit(self._stop(list(self.states.values()), timeout)).result(timeout + 1)
        loop.call_soon_threadsafe(loop.stop)
        self._loop = None


@asynccontextmanager
async def _http_transport(agent_dir: Path, cfg: ServerConfig) -> AsyncIterator[TransportStreams]:
    """See :meth:`McpManager._http`."""
    import httpx2
    from mcp.client.auth import OAuthFlowError
    from mcp.client.streamable_http import streamable_http_client

    from .oauth import LoginRequired, client_provider, has_login, login_hint, quiet_sdk_logs

    assert cfg.url is not None
    quiet_sdk_logs()
    refused: list[int] = []

    async def seen(response: httpx2.Response) -> None:
        if response.status_code == 401:
            refused.append(401)

    logged_in = has_login(agent_dir, cfg)
    client = httpx2.AsyncClient(
        headers=dict(cfg.headers),
        timeout=cfg.timeout,
        auth=client_provider(agent_dir, cfg) if logged_in else None,
        event_hooks={"response": [seen]},
    )
    try:
        async with streamable_http_client(cfg.url, http_client=client) as streams:
            yield streams
    except Exception as error:
        if refused or isinstance(_innermost(error), OAuthFlowError):
            again = " (the stored login no longer works)" if logged_in else ""
            raise LoginRequired(login_hint(cfg.name) + again) from None
        raise


def _as_call_result(result: object) -> CallToolResult:
    """The SDK's ``call_tool`` may answer other result kinds (input requests); this plugin
    asks for none, so anything else is an error for the model.
    """
    from mcp.types import CallToolResult

    if not isinstance(result, CallToolResult):
        raise McpCallError(f"unexpected MCP result: {type(result).__name__}")
    return result
