"""Bounding hook handlers: a deadline for every call, and a way to abandon one that hangs.

Handlers run on the event loop's thread: a plain function is called inline, an ``async def`` one
is driven step by step by :func:`call_bounded`. Most answer at once — ``message_update`` fires
for every streamed delta — so the common path only pushes a small :class:`Running` record on a
stack while the plugin's code runs, and pops it after. Three things act on that stack:

* the stop signals (SIGINT, SIGTERM): :func:`abandon_inline` raises :class:`Abandoned` inside
  the handler's code (a ``time.sleep`` there returns through it), so the loop gets to handle
  the signal instead of waiting for the handler;
* the :class:`Watchdog` thread (started by the print, JSON and RPC modes): when the code
  running inline is past its deadline, it interrupts the main thread with ``SIGALRM``, whose
  handler raises :class:`Abandoned` the same way;
* RPC ``abort``, read on the stdin thread while the loop is blocked, interrupts it the same way.

A handler that waits (awaits something that is not ready) leaves the stack while it waits; only
then are a loop timer for its deadline and a callback on the run's abort signal set up. Time spent
in a ``ctx.ui`` dialog does not count: the dialog pauses the record (:meth:`Running.pause`).
A waiting handler that is stopped is cancelled, and has :data:`GRACE` seconds to clean up (an
``except``/``finally`` that awaits); one that catches the cancellation and goes on waiting past
that is abandoned: its coroutine is never driven again (see :func:`_abandon`).

:class:`Abandoned` derives from ``BaseException`` so that a plugin's ``except Exception`` does
not swallow it. What it cannot reach: code that never returns to the interpreter (a C extension
computing for minutes) — the deadline is enforced as soon as it does. A dedicated worker thread
would reach that too, but it costs ~80 µs per call (the loop's per-delta budget is ~10 µs) and
would run plugin code off the loop's thread, where ``ctx.spawn`` and the session are not safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Coroutine, Generator, Iterator
from math import inf
from typing import TYPE_CHECKING, Final

from knightcode._abort import Aborted

if TYPE_CHECKING:
    from knightcode._abort import AbortSignal

__all__ = [
    "ABORT",
    "INTERRUPT",
    "TIMEOUT",
    "Abandoned",
    "HookTimeout",
    "Running",
    "Steps",
    "Watchdog",
    "abandon_inline",
    "abandon_waiting",
    "current",
    "wait_for",
]

TIMEOUT: Final = "timeout"
INTERRUPT: Final = "interrupt"
ABORT: Final = "abort"

TICK = 1.0
"""How often (seconds), at the most, the watchdog thread looks at the handler running inline:
a deadline is enforced within about that much (sooner when the handler's deadline is nearer)."""

GRACE = 1.0
"""Seconds a cancelled handler may go on waiting (to clean up) before it is abandoned."""

INLINE: list[Running] = []
"""The handlers whose code is running on the loop's thread right now, outermost first (a
handler may fire hooks itself, e.g. ``builtin:compaction`` fires ``session_before_compact``)."""

_WAITING: set[Running] = set()

Steps = Generator[object, None, object] | Coroutine[object, None, object]
"""A handler's awaitable, driven one step at a time (a coroutine, or an ``__await__`` iterator)."""


class Abandoned(BaseException):
    """Raised inside a handler's code to stop it; the dispatcher turns it into an outcome."""

    def __init__(self, record: Running, reason: str) -> None:
        super().__init__(reason)
        self.record = record
        self.reason = reason


class HookTimeout(Exception):
    """A handler did not answer within the hook deadline (``hookTimeoutMs``)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"did not answer within {seconds:g} s (hookTimeoutMs)")


class _Waiter:
    """What a handler that waits needs: its task, the deadline timer, why it was stopped."""

    __slots__ = ("forced", "grace", "loop", "reason", "task", "timer")

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[object]) -> None:
        self.loop = loop
        self.task = task
        self.timer: asyncio.TimerHandle | None = None
        self.grace: asyncio.TimerHandle | None = None
        self.reason: str | None = None
        self.forced = False
        """The handler outlived :data:`GRACE` after its cancellation: it is not driven again."""

    def force(self) -> None:
        # The grace is over and the handler still waits: cancel the task once more; _Steps
        # sees ``forced`` and closes the handler's coroutine instead of passing it on.
        if not self.task.done():
            self.forced = True
            self.task.cancel()


class Running:
    """One handler call in progress: its deadline (``time.monotonic()``; ``inf`` for none).

    A handler keeps one for its calls (allocating one per call is a measurable part of a
    per-delta hook's cost); ``busy`` says it is taken, by a call still running or waiting.
    """

    __slots__ = ("busy", "expires", "paused", "paused_at", "waiter")

    def __init__(self, expires: float = inf) -> None:
        self.expires = expires
        self.paused = 0
        self.busy = False
        self.waiter: _Waiter | None = None

    def pause(self) -> None:
        """A dialog opened: the deadline stops counting."""
        self.paused += 1
        if self.paused == 1:
            self.paused_at = time.monotonic()
            waiter = self.waiter
            if waiter is not None and waiter.timer is not None:
                waiter.timer.cancel()
                waiter.timer = None

    def resume(self) -> None:
        """The dialog closed: the deadline moves by the time it was open."""
        self.paused -= 1
        if self.paused == 0:
            self.expires += time.monotonic() - self.paused_at
            self._arm()

    def expired(self, now: float) -> bool:
        """Past its deadline and not paused."""
        return not self.paused and now >= self.expires

    def _arm(self) -> None:
        waiter = self.waiter
        if waiter is not None and self.expires != inf and not self.paused:
            delay = max(self.expires - time.monotonic(), 0.0)
            waiter.timer = waiter.loop.call_later(delay, self.abandon, TIMEOUT)

    def abandon(self, reason: str) -> None:
        """Cancel the waiting handler's task (once); it ends in :meth:`outcome` of ``reason``."""
        waiter = self.waiter
        if waiter is not None and waiter.reason is None and not waiter.task.done():
            waiter.reason = reason
            waiter.task.cancel()
            waiter.grace = waiter.loop.call_later(GRACE, waiter.force)

    def _aborted(self) -> None:
        # The run was aborted. A handler waiting in a scope of that signal itself is cancelled
        # by the scope (it is told "Aborted" and may still answer); cancelling it a second time
        # would turn its Aborted into CancelledError. A scope entered before this callback was
        # registered has run already: the task is being cancelled. One entered later runs
        # right after it, within this abort(): look again on the next iteration, which comes
        # before the task wakes up.
        waiter = self.waiter
        if waiter is not None and not waiter.task.cancelling():
            waiter.loop.call_soon(self._abort_unless_stopping)

    def _abort_unless_stopping(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.task.cancelling():
            self.abandon(ABORT)


def current() -> Running | None:
    """The handler whose code is running right now (a dialog it opens pauses its deadline)."""
    return INLINE[-1] if INLINE else None


def outcome(reason: str, seconds: float | None) -> Exception:
    """The exception an abandoned call ends in: :class:`HookTimeout` or ``Aborted``."""
    return HookTimeout(seconds or 0.0) if reason == TIMEOUT else Aborted()


def leave(record: Running) -> None:
    """Take ``record`` off the inline stack (normally the top)."""
    if INLINE and INLINE[-1] is record:
        INLINE.pop()
    else:
        with contextlib.suppress(ValueError):
            INLINE.remove(record)


# --- handlers that wait -----------------------------------------------------------------------


class _Steps:
    """Await the rest of a handler's coroutine, each step of it on the inline stack again."""

    __slots__ = ("first", "record", "steps")

    def __init__(self, record: Running, steps: Steps, first: object) -> None:
        self.record = record
        self.steps = steps
        self.first = first

    def __await__(self) -> Generator[object, None, object]:
        record, steps, pending = self.record, self.steps, self.first
        while True:
            thrown: BaseException | None = None
            try:
                yield pending  # an asyncio task sends None back
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as error:  # the task is cancelled: pass it on to the handler
                waiter = record.waiter
                if waiter is not None and waiter.forced:
                    _abandon(steps)
                    raise
                thrown = error
            INLINE.append(record)
            try:
                pending = steps.send(None) if thrown is None else steps.throw(thrown)
            except StopIteration as done:
                return done.value
            finally:
                leave(record)


def _abandon(steps: Steps) -> None:
    """Drop a handler that outlived its grace for good: it is never driven again, not even to
    close it.

    Closing would run the plugin's code once more (its ``except``/``finally``), and code that
    would not stop when cancelled may not stop when closed either — at exit, with no event loop
    left, such a loop spins forever. So the coroutine keeps an extra reference that is never
    released: Python then never finalizes it (one small frame per abandoned call).
    """
    import ctypes  # rare: not worth its import time at start-up

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(steps))


async def wait_for(
    record: Running,
    steps: Steps,
    first: object,
    abort: AbortSignal | None,
    seconds: float | None,
) -> object:
    """The rest of a handler that waits, bounded by its deadline and the run's ``abort``.

    :raises HookTimeout: the deadline passed
    :raises Aborted: the run was aborted, or the mode is stopping
    """
    task = asyncio.current_task()
    if task is None:  # pragma: no cover - hooks are always awaited in a task
        return await _Steps(record, steps, first)
    waiter = record.waiter = _Waiter(asyncio.get_running_loop(), task)
    record._arm()
    remove = abort.on_abort(record._aborted) if abort is not None else None
    _WAITING.add(record)
    try:
        value = await _Steps(record, steps, first)
    except asyncio.CancelledError:
        if waiter.reason is None:
            raise
        remaining = task.uncancel()
        if waiter.forced:
            remaining = task.uncancel()  # the second cancellation, from force()
        if remaining > 0:
            raise
        raise outcome(waiter.reason, seconds) from None
    except Abandoned as stopped:
        if stopped.record is not record:
            raise
        raise outcome(stopped.reason, seconds) from None
    finally:
        _WAITING.discard(record)
        if remove is not None:
            remove()
        if waiter.timer is not None:
            waiter.timer.cancel()
        if waiter.grace is not None:
            waiter.grace.cancel()
        record.waiter = None
        record.busy = False
    if waiter.reason is not None:  # the handler swallowed the cancellation and answered
        task.uncancel()
        raise outcome(waiter.reason, seconds)
    return value


def abandon_waiting(reason: str = INTERRUPT) -> None:
    """Stop every handler that is waiting (the mode is stopping); call on the loop's thread."""
    for record in list(_WAITING):
        record.abandon(reason)


# --- handlers that block the loop -------------------------------------------------------------


def abandon_inline(reason: str = INTERRUPT) -> None:
    """Raise :class:`Abandoned` for the outermost handler running inline, if any. Only from a
    signal handler (the main thread, between two bytecodes of whatever runs).
    """
    if INLINE:
        raise Abandoned(INLINE[0], reason)


class Watchdog:
    """The daemon thread that interrupts a handler blocking the loop past its deadline, and the
    ``SIGALRM`` handler through which it (and RPC ``abort``) does so.

    One per process; :meth:`start` from the main thread (signal handlers can only be set
    there). It never keeps the interpreter from exiting.
    """

    def __init__(self) -> None:
        self._request: tuple[Running, str] | None = None
        self._thread: threading.Thread | None = None
        self._main = threading.main_thread().ident or 0
        self._stop = threading.Event()
        self._previous: Callable[..., object] | int | None = None

    @property
    def running(self) -> bool:
        """Whether the thread is watching."""
        return self._thread is not None

    def start(self) -> None:
        """Install the ``SIGALRM`` handler and start watching (idempotent)."""
        if self._thread is not None or threading.current_thread() is not threading.main_thread():
            return
        self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
        self._stop = threading.Event()  # a fresh one: a thread stopped earlier may still wake
        self._thread = threading.Thread(target=self._watch, name="knightcode-hooks", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching and restore the previous ``SIGALRM`` handler."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread = None
        if self._previous is not None:
            signal.signal(signal.SIGALRM, self._previous)
            self._previous = None

    def interrupt(self, reason: str = INTERRUPT) -> bool:
        """From any thread: abandon the handler blocking the loop, if one does. True if asked."""
        stack = list(INLINE)
        if not stack or self._thread is None:
            return False
        self._ask(stack[0], reason)
        return True

    def _ask(self, record: Running, reason: str) -> None:
        self._request = (record, reason)
        with contextlib.suppress(OSError, ValueError):
            signal.pthread_kill(self._main, signal.SIGALRM)

    def _on_alarm(self, _signum: int, _frame: object) -> None:
        request, self._request = self._request, None
        if request is None or not any(record is request[0] for record in INLINE):
            return
        record, reason = request
        if reason == TIMEOUT and not record.expired(time.monotonic()):
            return  # the call ended and the record serves a new one
        raise Abandoned(record, reason)

    def _watch(self) -> None:
        # Every wake-up takes the GIL from the loop's thread; while a reply streams that costs
        # the loop a forced switch, so the thread wakes rarely: once a TICK, or when the handler
        # running inline is due.
        stop, wait = self._stop, TICK  # this thread's event, even after a restart
        while not stop.wait(wait):
            now, wait = time.monotonic(), TICK
            for record in list(INLINE):
                if record.expired(now):
                    self._ask(record, TIMEOUT)
                    break
                if not record.paused:
                    wait = max(min(wait, record.expires - now), 0.01)


WATCHDOG: Final = Watchdog()


@contextlib.contextmanager
def watching() -> Iterator[Watchdog]:
    """The watchdog runs for the duration of the block (a mode's lifetime)."""
    started = not WATCHDOG.running
    WATCHDOG.start()
    try:
        yield WATCHDOG
    finally:
        if started:
            WATCHDOG.stop()
