"""``knightcode --mode rpc``: the long-lived process a program drives over stdin/stdout.

Start-up builds the agent like the other modes, points the plugins' ``ctx.ui`` at the RPC
dialogs, and starts reading stdin. stdout is taken over first: the records go to a private
duplicate of the original stdout and file descriptor 1 is pointed at stderr, so a stray
``print()`` in a plugin (or a child process inheriting fd 1) cannot corrupt the stream.

End of input, SIGTERM, SIGINT and SIGHUP all end the same way, the reference's: the running
prompt and ``bash`` commands are aborted (the aborted answer is recorded), open dialogs resolve
to their defaults, the responses still owed are written, ``session_shutdown`` fires, the session
file is synced, and the exit status is 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import IO, TYPE_CHECKING

from knightcode._modes.rpc.framing import StdinReader
from knightcode._modes.rpc.responses import plugin_error
from knightcode._modes.rpc.server import RpcServer
from knightcode._modes.rpc.ui import RpcUI
from knightcode._modes.wire import RecordWriter

if TYPE_CHECKING:
    from knightcode._cli.main_command import RunRequest
    from knightcode._plugins.host import PluginHost
    from knightcode._plugins.planning import LoadPlan

__all__ = ["run_rpc_session"]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def take_stdout() -> IO[bytes]:
    """A private handle on the real stdout; fd 1 (and ``sys.stdout``) now lead to stderr."""
    if sys.stdout is not None:
        sys.stdout.flush()
    records = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    return records


def _install_ui(host: PluginHost, server: RpcServer, ui: RpcUI) -> None:
    if host.context is not None:
        host.context.bind_ui(ui, has_ui=True, shutdown=server.request_stop_when_idle)


def _report_load_failures(host: PluginHost, writer: RecordWriter) -> None:
    from knightcode._plugins.host import PluginFailure
    from knightcode._plugins.records import PluginStatus

    for record in host.records:
        if record.status is PluginStatus.FAILED:
            writer.write(
                plugin_error(PluginFailure(record.name, record.source, "load", record.error or ""))
            )


async def run_rpc_session(request: RunRequest, host: PluginHost, plan: LoadPlan) -> int:
    """Serve RPC commands until end of input or a stop signal; returns the exit status."""
    from knightcode._modes.setup import build_agent, report_session_notices

    writer = RecordWriter(take_stdout())
    agent = await build_agent(request, host, plan)
    for warning in host.warnings:
        print(f"knightcode: warning: {warning}", file=sys.stderr)
    report_session_notices(agent, writer.write)
    ui = RpcUI(writer.write)
    server = RpcServer(agent, host, writer, ui)
    _install_ui(host, server, ui)
    host.on_failure(lambda failure: writer.write(plugin_error(failure)))
    _report_load_failures(host, writer)
    agent.subscribe(server.write_event)
    agent.subscribe(server.ctx.on_event)

    loop = asyncio.get_running_loop()
    stopping = False

    def on_signal() -> None:
        nonlocal stopping
        if stopping:
            os._exit(1)  # a second signal: the clean shutdown is stuck, leave now
        stopping = True
        server.stop_requested.set()

    for signum in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):  # non-Unix
            loop.add_signal_handler(signum, on_signal)
    try:
        fd = sys.stdin.fileno() if sys.stdin is not None else -1
    except (OSError, ValueError):
        fd = -1
    if fd >= 0:
        StdinReader(fd, loop, server.on_lines, server.on_eof).start()
    else:
        server.on_eof()  # no stdin at all: nothing will ever arrive
    try:
        await host.hooks.session_start(reason="startup", previous_session_file=None)
        server.set_ready()
        await server.stop_requested.wait()
    finally:
        stopping = True
        await server.close()
        await host.hooks.session_shutdown(reason="quit", target_session_file=None)
        if host.context is not None:
            await host.context.aclose()
        writer.flush()
        agent.session.close()
        await agent.model_registry.aclose()
        for signum in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):  # non-Unix
                loop.remove_signal_handler(signum)
    return 0
