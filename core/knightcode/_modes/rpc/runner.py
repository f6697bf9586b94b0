"""``knightcode --mode rpc``: the long-lived process a program drives over stdin/stdout.

Start-up builds the agent like the other modes, points the plugins' ``ctx.ui`` at the RPC
dialogs, and starts reading stdin. stdout was taken over before plugins were imported
(:mod:`knightcode._modes.stdout`): the records go to a private duplicate of the original stdout
and file descriptor 1 leads to stderr, so a stray ``print()`` in a plugin (at import time or in
a hook, or a child process inheriting fd 1) cannot corrupt the stream.

End of input, SIGTERM, SIGINT and SIGHUP all end the same way, the reference's: the running
prompt and ``bash`` commands are aborted (the aborted answer is recorded), open dialogs resolve
to their defaults, the responses still owed are written, ``session_shutdown`` fires, the session
file is synced, and the exit status is 0. A plugin handler that hangs is stopped by the first
signal; a second signal exits at once (128 + its number) after syncing the session file.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import TYPE_CHECKING

from knightcode._modes.rpc.framing import StdinReader
from knightcode._modes.rpc.responses import plugin_error
from knightcode._modes.rpc.server import RpcServer
from knightcode._modes.rpc.ui import RpcUI
from knightcode._modes.signals import StopSignals
from knightcode._modes.stdout import take_stdout
from knightcode._modes.wire import RecordWriter
from knightcode._plugins.watchdog import watching

if TYPE_CHECKING:
    from knightcode._cli.main_command import RunRequest
    from knightcode._plugins.host import PluginHost
    from knightcode._plugins.planning import LoadPlan

__all__ = ["run_rpc_session"]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


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

    writer = RecordWriter(request.output if request.output is not None else take_stdout())
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

    def stop() -> None:
        agent.abort()  # at once: nothing of the run starts after the handler a signal stopped
        server.stop_requested.set()

    # A second signal means the clean shutdown is stuck: sync the session and leave at once.
    signals = StopSignals(STOP_SIGNALS, stop, agent.session.sync)
    with watching() as watchdog, signals:
        try:
            fd = sys.stdin.fileno() if sys.stdin is not None else -1
        except (OSError, ValueError):
            fd = -1
        if fd >= 0:
            reader = StdinReader(fd, asyncio.get_running_loop(), server.on_lines, server.on_eof)
            # An ``abort`` read while a plugin's handler blocks the loop stops that handler, so
            # the loop gets to the command (see knightcode._plugins.watchdog).
            reader.on_abort = watchdog.interrupt
            reader.start()
        else:
            server.on_eof()  # no stdin at all: nothing will ever arrive
        try:
            await host.hooks.session_start(reason="startup", previous_session_file=None)
            server.set_ready()
            await server.stop_requested.wait()
        finally:
            await server.close()
            await host.hooks.session_shutdown(reason="quit", target_session_file=None)
            if host.context is not None:
                await host.context.aclose()
            writer.flush()
            agent.session.close()
            await agent.model_registry.aclose()
    return 0
