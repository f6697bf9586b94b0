"""``RpcServer``: turns input lines into responses, each command handled concurrently.

Every line is parsed and validated at once, on the event loop's thread; a bad line is answered
then and there and never reaches a handler. A valid command runs as its own task, so a
``get_state`` answers while a ``prompt`` streams and responses may leave out of order, each
carrying its request's ``id``. Lines that arrive before the session has started (while
``session_start`` handlers run) wait in order, except dialog answers, which a ``session_start``
handler may be waiting for.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Coroutine
from typing import TYPE_CHECKING

from knightcode._modes.rpc.commands import CommandError, RpcCommand, UiAnswer, parse_line
from knightcode._modes.rpc.handlers import HANDLERS, Handler, RpcContext
from knightcode._modes.rpc.responses import ANSWERED, Reply, failure, success
from knightcode._modes.rpc.session_handlers import SESSION_HANDLERS

if TYPE_CHECKING:
    from knightcode._agent.session import AgentSession
    from knightcode._modes.rpc.ui import RpcUI
    from knightcode._modes.wire import RecordWriter
    from knightcode._plugins.host import PluginHost
    from knightcode._types.events import SessionEvent

__all__ = ["RpcServer"]

Parsed = RpcCommand | UiAnswer | CommandError


def _message(error: BaseException) -> str:
    text = str(error).strip()
    return text or type(error).__name__


class RpcServer:
    """Dispatches input lines to the command handlers.

    :param writer: the stdout record writer
    :param ui: the plugins' RPC UI (answers are routed to it)
    """

    def __init__(
        self, agent: AgentSession, host: PluginHost, writer: RecordWriter, ui: RpcUI
    ) -> None:
        self.writer = writer
        self.ui = ui
        self.ctx = RpcContext(agent, host, writer.write, self.spawn)
        self._handlers: dict[str, Handler] = {**HANDLERS, **SESSION_HANDLERS}
        self._tasks: set[asyncio.Task[object]] = set()
        self._ready = False
        self._backlog: list[Parsed] = []
        self._closing = False
        self.stop_requested = asyncio.Event()
        """Set at end of input, on SIGTERM, or when a plugin asks knightcode to shut down."""

    # --- input ------------------------------------------------------------------------------

    def on_lines(self, lines: list[bytes]) -> None:
        """A batch of input lines (called by the stdin reader, on the loop's thread)."""
        for line in lines:
            if self._closing:
                return  # shutting down: later commands would only be aborted
            parsed = parse_line(line)
            if not self._ready and not isinstance(parsed, UiAnswer):
                self._backlog.append(parsed)
            else:
                self._dispatch(parsed)

    def on_eof(self) -> None:
        """End of input: finish (see :meth:`close`)."""
        self.stop_requested.set()

    def set_ready(self) -> None:
        """The session has started: handle what arrived meanwhile, in order, then go live."""
        self._ready = True
        backlog, self._backlog = self._backlog, []
        for parsed in backlog:
            self._dispatch(parsed)

    def _dispatch(self, parsed: Parsed) -> None:
        if isinstance(parsed, CommandError):
            self.writer.write(failure(parsed.id, parsed.command, parsed.error))
        elif isinstance(parsed, UiAnswer):
            self.ui.resolve(parsed)
        else:
            try:
                result = self._handlers[parsed.type](self.ctx, parsed)
            except Exception as error:
                self.writer.write(failure(parsed.id, parsed.type, _message(error)))
                return
            if isinstance(result, Awaitable):
                self.spawn(self._finish(parsed, result))
            else:
                self._answer(parsed, result)

    async def _finish(self, command: RpcCommand, pending: Awaitable[Reply]) -> None:
        try:
            data = await pending
        except Exception as error:
            self.writer.write(failure(command.id, command.type, _message(error)))
            return
        self._answer(command, data)

    def _answer(self, command: RpcCommand, data: Reply) -> None:
        if data is ANSWERED:
            return
        try:
            self.writer.write(success(command.id, command.type, data))
        except (TypeError, ValueError) as error:  # data a plugin put into a message may not be JSON
            self.writer.write(
                failure(command.id, command.type, f"the response could not be encoded: {error}")
            )

    def write_event(self, event: SessionEvent) -> None:
        """Write a session event (subscribed to the agent)."""
        if self._closing and event["type"] == "agent_start":
            self.ctx.agent.abort()  # accepted before end of input, started after: abort it too
        try:
            self.writer.write_event(event)
        except (
            TypeError,
            ValueError,
        ) as error:  # a plugin put something that is not JSON into an event
            print(
                f"knightcode: rpc: {event.get('type')} event not written: {error}", file=sys.stderr
            )

    # --- tasks and shutdown -----------------------------------------------------------------

    def spawn(self, work: Coroutine[object, object, object]) -> asyncio.Task[object]:
        """Run ``work`` as a task that :meth:`close` waits for."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[object]) -> None:
        self._tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            print(f"knightcode: rpc: {_message(error)}", file=sys.stderr)

    def request_stop_when_idle(self) -> None:
        """A plugin's ``ctx.shutdown()``: stop once the running prompt has settled."""

        async def stop() -> None:
            await self.ctx.agent.wait_idle()
            self.stop_requested.set()

        self.spawn(stop())

    async def close(self, timeout: float = 10.0) -> None:
        """Stop taking commands, abort running work (the prompt, ``bash`` commands, model
        look-ups, open dialogs) and wait for the handlers to write their responses.

        Commands that were already accepted still run, but a prompt among them is aborted as
        soon as its run starts (see :meth:`write_event`), as if it had been running at EOF.
        """
        self._closing = True
        self.ui.close()
        for signal in list(self.ctx.bash_signals):
            signal.abort()
        self.ctx.stopping = True
        self.ctx.abort_lookups()
        agent = self.ctx.agent
        agent.abort()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        # Handlers may spawn more tasks (a prompt's run, a deferred bash record): wait until
        # none is left, not just for the ones running now.
        while pending := [task for task in self._tasks if not task.done()]:
            _, late = await asyncio.wait(pending, timeout=max(deadline - loop.time(), 0))
            if late:
                print(
                    f"knightcode: rpc: {len(late)} command(s) did not finish in time",
                    file=sys.stderr,
                )
                for task in late:
                    task.cancel()
                await asyncio.wait(late, timeout=1.0)
                break
        try:
            await asyncio.wait_for(agent.wait_idle(), max(deadline - loop.time(), 0.1))
        except TimeoutError:
            print("knightcode: rpc: the aborted prompt did not settle in time", file=sys.stderr)
        self.writer.flush()
