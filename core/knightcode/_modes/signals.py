"""Stop signals in the modes that run without a terminal UI (print, JSON, RPC).

The first SIGINT or SIGTERM asks the mode to stop: ``on_stop`` runs on the event loop (it aborts
the run), a plugin handler blocking the loop is abandoned at once (it is stopped inside its
``time.sleep``; see :mod:`knightcode._plugins.watchdog`) and handlers waiting elsewhere are
stopped. A second one means "now": ``on_exit`` makes what was written durable (best effort) and
the process exits with 128 + the signal number, even if the loop is stuck.

The second signal is handled at the Python level, in the main thread between two bytecodes, so
it works while plugin code blocks the loop; it never writes anything partial itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Sequence
from types import FrameType

from knightcode._plugins.watchdog import INLINE, INTERRUPT, abandon_inline, abandon_waiting

__all__ = ["StopSignals"]


class StopSignals:
    """Install with :meth:`install`, remove with :meth:`uninstall` (or use as a context manager).

    :param on_stop: the first signal, called on the loop (and, when a plugin's handler is running,
        at once from the signal handler too: it must be idempotent and only set flags or abort)
    :param on_exit: the second signal, called just before ``os._exit`` (must not block)
    """

    def __init__(
        self,
        signals: Sequence[signal.Signals],
        on_stop: Callable[[], None],
        on_exit: Callable[[], None],
    ) -> None:
        self._signals = tuple(signals)
        self._on_stop = on_stop
        self._on_exit = on_exit
        self._loop: asyncio.AbstractEventLoop | None = None
        self.received = 0
        """How many stop signals arrived."""

    def install(self) -> StopSignals:
        """Handle the signals from now on (on the running loop's thread, the main thread)."""
        loop = asyncio.get_running_loop()
        for signum in self._signals:
            try:
                # asyncio's handler runs ``on_stop`` on the loop; ours, set over it, keeps its
                # wake-up but can also interrupt a handler that blocks the loop.
                loop.add_signal_handler(signum, self._stop_on_loop)
                signal.signal(signum, self._on_signal)
            except (NotImplementedError, RuntimeError, ValueError):  # not Unix, not main thread
                continue
        self._loop = loop
        return self

    def uninstall(self) -> None:
        """Back to the default handling."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        for signum in self._signals:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signum)

    def __enter__(self) -> StopSignals:
        return self.install()

    def __exit__(self, *_exc: object) -> None:
        self.uninstall()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.received += 1
        if self.received > 1:
            print("knightcode: stopped", file=sys.stderr)
            with contextlib.suppress(BaseException):
                self._on_exit()
            os._exit(128 + signum)
        if INLINE:
            # A plugin's handler is running (it may block the loop): stop the run now, from
            # here, so that nothing after the handler starts, then stop the handler itself.
            self._on_stop()
            abandon_inline(INTERRUPT)

    def _stop_on_loop(self) -> None:
        if self.received > 1:
            return
        abandon_waiting(INTERRUPT)
        self._on_stop()
