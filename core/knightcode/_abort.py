"""One way to stop work: the :class:`AbortSignal` of a run, and its cancel scopes.

Every run of the agent (a prompt, a compaction, a tree navigation, a user's ``!command``) owns one
signal; aborting the run sets it. Work that waits — a provider stream, a process, a retry delay, a
summary request, a model discovery — waits *inside a scope* of that signal::

    try:
        async with signal.scope():
            await process.wait()
    except Aborted:
        kill(process)

Setting the signal cancels the task waiting in the scope at once (``Task.cancel``, on the same
event loop; no watcher task, no polling), and the scope turns that cancellation into
:class:`Aborted`, so the caller records "aborted" the way it records any other outcome. A
cancellation that did not come from the signal (the task itself is being cancelled, e.g. at
shutdown) passes through unchanged, as structured concurrency requires.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Literal, TypeVar

__all__ = ["AbortSignal", "Aborted"]

_T = TypeVar("_T")


class Aborted(Exception):
    """The work was stopped because its :class:`AbortSignal` was set."""


class AbortSignal:
    """Set once, when the user (or a plugin, or shutdown) aborts the run that owns it.

    Code that only needs to know asks :attr:`aborted`; code that waits does so in :meth:`scope`
    (or through :meth:`guard` and :meth:`sleep`), so that aborting reaches it at once.
    """

    __slots__ = ("_aborted", "_callbacks")

    def __init__(self) -> None:
        self._aborted = False
        self._callbacks: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        return f"<AbortSignal {'aborted' if self._aborted else 'armed'}>"

    @property
    def aborted(self) -> bool:
        """Whether the run was aborted."""
        return self._aborted

    def is_set(self) -> bool:
        """The same as :attr:`aborted` (reads like the ``asyncio.Event`` it replaces)."""
        return self._aborted

    def abort(self) -> None:
        """Abort: every scope waiting on this signal is cancelled. Later calls do nothing."""
        if self._aborted:
            return
        self._aborted = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_abort(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` (synchronously, once) when the signal is set — at once when it
        already is. Returns a function that removes the callback.
        """
        if self._aborted:
            callback()
            return _nothing
        self._callbacks.append(callback)

        def remove() -> None:
            with contextlib.suppress(ValueError):  # already called, or already removed
                self._callbacks.remove(callback)

        return remove

    def raise_if_aborted(self) -> None:
        """Raise :class:`Aborted` when the signal is set."""
        if self._aborted:
            raise Aborted

    def scope(self) -> AbortScope:
        """An ``async with`` block that the signal cancels; it raises :class:`Aborted`."""
        return AbortScope(self)

    async def guard(self, awaitable: Awaitable[_T]) -> _T:
        """Await ``awaitable`` inside a scope: its result, or :class:`Aborted`."""
        if self._aborted:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()  # never awaited: close it so Python does not warn
            elif asyncio.isfuture(awaitable):
                awaitable.cancel()  # already running (a task, a gather): stop it
                awaitable.add_done_callback(_consume)  # nobody awaits it: no "never retrieved"
            raise Aborted
        async with AbortScope(self):
            return await awaitable
        raise AssertionError("unreachable: the scope raises or returns")  # pragma: no cover

    async def outlast(
        self, future: asyncio.Future[_T], timeout: float | None = None
    ) -> Literal["done", "timed_out", "aborted"]:
        """Wait for ``future`` until it is done, ``timeout`` seconds pass (None or <= 0: no
        limit) or the signal is set — whichever comes first — without cancelling it: a process
        being waited for is still there to be killed, its way (a process group, a container,
        a VM), by the caller that hears ``"timed_out"`` or ``"aborted"``.
        """
        limit = timeout if timeout is not None and timeout > 0 else None
        try:
            async with AbortScope(self):
                await asyncio.wait_for(asyncio.shield(future), limit)
        except Aborted:
            return "aborted"
        except TimeoutError:
            return "timed_out"
        return "done"

    async def sleep(self, seconds: float) -> bool:
        """Wait ``seconds``; False (at once) when the signal is set first."""
        try:
            async with AbortScope(self):
                await asyncio.sleep(seconds)
        except Aborted:
            return False
        return True

    async def wait(self) -> None:
        """Return once the signal is set."""
        if self._aborted:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not waiter.done():
                waiter.set_result(None)

        remove = self.on_abort(wake)
        try:
            await waiter
        finally:
            remove()


def _nothing() -> None:
    return None


def _consume(future: asyncio.Future[object]) -> None:
    """Retrieve the outcome of a future nobody will await, so asyncio does not warn about it."""
    if not future.cancelled():
        future.exception()


class AbortScope:
    """See :meth:`AbortSignal.scope`."""

    __slots__ = ("_cancelling", "_remove", "_signal", "_task")

    def __init__(self, signal: AbortSignal) -> None:
        self._signal = signal
        self._task: asyncio.Task[object] | None = None
        self._cancelling = False
        self._remove: Callable[[], None] = _nothing

    async def __aenter__(self) -> AbortScope:
        self._signal.raise_if_aborted()
        self._task = asyncio.current_task()
        self._cancelling = False
        self._remove = self._signal.on_abort(self._cancel)
        return self

    def _cancel(self) -> None:
        task = self._task
        # Set from inside the scope's own task (the work aborted itself): it is running, not
        # waiting, so there is nothing to interrupt; its next scope raises Aborted.
        if task is None or task.done() or task is _current_task():
            return
        self._cancelling = True
        task.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        self._remove()
        if not self._cancelling or self._task is None:
            return False
        self._cancelling = False
        if self._task.uncancel() > 0:
            return False  # the task is being cancelled for another reason as well: let it go
        if exc_type is None or issubclass(exc_type, asyncio.CancelledError):
            raise Aborted from None
        return False


def _current_task() -> asyncio.Task[object] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop: called from plain synchronous code
        return None
