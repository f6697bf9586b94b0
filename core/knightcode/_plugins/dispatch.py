"""Calling a hook's implementations in load order and combining their results by its rule.

Each rule of :class:`~knightcode._plugins.combine.Rule` is one function below, typed by the result
it combines. A handler may be a plain function or ``async def``. What it returns is checked by the
hook's parser (:mod:`knightcode._plugins.results`): a wrong shape is reported as an extension
error naming the plugin and the hook, and counts as no answer. A handler that raises is reported
and skipped — except under ``FIRST_BLOCK`` (``tool_call``), where the exception (or the wrong
shape, reported too) propagates, because a failing guard must block the tool, not wave it
through.

Every call of a plugin's handler is bounded (:mod:`knightcode._plugins.watchdog`): one that does
not answer within the hook deadline (``hookTimeoutMs``) is reported and skipped — under
``FIRST_BLOCK`` it blocks — and one still running when the run is aborted is stopped. A handler
that raises :class:`~knightcode._abort.Aborted` (it waited in the run's abort signal, or was
stopped by the abort) is not reported: the abort is the run's outcome, which the caller records
from the signal. Built-in plugins (``builtin:*``) are trusted to honour ``ctx.signal`` and may
take as long as their work takes (compaction summarises inside ``session_check_compaction``).
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from math import inf
from time import monotonic
from types import CoroutineType
from typing import TYPE_CHECKING, TypeVar

from knightcode._abort import Aborted, AbortSignal
from knightcode._plugins.parsing import WrongResult, parse_agent_start, parse_input, parse_patch
from knightcode._plugins.watchdog import (
    INLINE,
    Abandoned,
    HookTimeout,
    Running,
    Steps,
    leave,
    outcome,
    wait_for,
)

if TYPE_CHECKING:
    from knightcode._plugins.results import PluginMessage, ToolResultPatch

_R = TypeVar("_R")
_V = TypeVar("_V")

Reporter = Callable[[str, str, BaseException], None]
"""``report(plugin_name, hook_name, exception)``"""

Parser = Callable[[object], "_R | None"]


@dataclass(frozen=True)
class Handler:
    """One hook implementation, ready to call: which plugin owns it and which arguments it takes."""

    plugin_name: str
    function: Callable[..., object]
    argnames: tuple[str, ...]
    bounded: bool = True
    """Whether the hook deadline and the run's abort apply (not to built-in plugins)."""
    record: Running = field(default_factory=Running, compare=False, repr=False)
    """The record of this handler's calls (see :class:`Running`)."""


@dataclass(slots=True)
class Call:
    """One firing of a hook: its name, the handlers in call order, the arguments by name, and
    where failures go.

    Not frozen: a frozen dataclass costs ~0.5 µs more to build, and one is built for every
    streamed delta a plugin observes. Nothing changes it after it is built (the chaining rules
    update ``kwargs``, the dict).
    """

    hook: str
    handlers: Sequence[Handler]
    kwargs: dict[str, object]
    report: Reporter
    trace: bool = False
    limit: float | None = None
    """The hook deadline in seconds (None: none)."""


class ResultError(Exception):
    """A handler returned a value of the wrong shape (wraps :class:`WrongResult` with the value)."""

    def __init__(self, value: object, problem: WrongResult) -> None:
        shown = repr(value)
        shown = shown if len(shown) <= 200 else shown[:197] + "..."
        super().__init__(f"returned {shown}: {problem}")


async def _invoke(call: Call, handler: Handler) -> object:
    if call.trace:
        return await _traced(call, handler)
    args = [call.kwargs[name] for name in handler.argnames]
    if not handler.bounded:
        result = handler.function(*args)
        return await result if inspect.isawaitable(result) else result
    # The deadline and the abort cover the plugin's code while it runs (the inline stack) and,
    # only if it waits, the wait (wait_for). Most handlers answer at once: message_update fires
    # for every streamed delta, so this path is kept to a few operations.
    limit = call.limit
    record = handler.record
    if record.busy:  # this handler is running already (it fired its own hook, or two tasks)
        record = Running()
    record.busy = True
    record.expires = monotonic() + limit if limit else inf
    INLINE.append(record)
    waits = False
    try:
        result = handler.function(*args)
        if result is None:
            return None
        if type(result) is CoroutineType:
            steps: Steps = result
        elif inspect.isawaitable(result):
            steps = result.__await__()
        else:
            return result
        try:
            first = steps.send(None)
        except StopIteration as done:
            return done.value  # answered without waiting
        waits = True
    except Abandoned as stopped:
        if stopped.record is not record:
            raise  # meant for an outer handler (this one runs inside it)
        raise outcome(stopped.reason, limit) from None
    finally:
        if INLINE[-1] is record:
            INLINE.pop()
        else:
            leave(record)
        if not waits:
            record.busy = False
    signal = getattr(call.kwargs.get("ctx"), "signal", None)  # the run's, when there is one
    abort = signal if isinstance(signal, AbortSignal) else None
    return await wait_for(record, steps, first, abort, limit)


async def _traced(call: Call, handler: Handler) -> object:
    """:func:`_invoke` with a trace line on stderr (``KNIGHTCODE_TRACE_PLUGINS``)."""
    started = time.perf_counter()
    result = await _invoke(replace(call, trace=False), handler)
    elapsed = (time.perf_counter() - started) * 1000
    shown = repr(result)
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    print(
        f"knightcode trace: {call.hook} -> {handler.plugin_name} ({elapsed:.2f} ms) = {shown}",
        file=sys.stderr,
    )
    return result


def _parsed(value: object, parse: Parser[_R]) -> _R | None:
    try:
        return parse(value)
    except WrongResult as problem:
        raise ResultError(value, problem) from None


async def _isolated(call: Call, handler: Handler, parse: Parser[_R]) -> _R | None:
    """Call one handler and check its result; a raise or a wrong shape is reported and turns
    into None.
    """
    try:
        return _parsed(await _invoke(call, handler), parse)
    except Aborted:
        return None  # stopped by the run's abort: an outcome, not a plugin failure
    except Exception as error:
        _report(call, handler, error)
        return None


def _report(call: Call, handler: Handler, error: Exception) -> None:
    if isinstance(error, HookTimeout):
        error.__traceback__ = None  # where knightcode gave up is no place in the plugin
    call.report(handler.plugin_name, call.hook, error)


def _ignore(value: object) -> None:
    if value is not None:
        from knightcode._plugins.parsing import parse_nothing

        parse_nothing(value)


async def notify(call: Call) -> None:
    """NOTIFY: every handler runs; results are ignored (a non-None one is reported)."""
    for handler in call.handlers:
        await _isolated(call, handler, _ignore)


def _is_cancel(result: object) -> bool:
    from knightcode._plugins.results import Cancel  # a handler answered: the module is loaded

    return isinstance(result, Cancel)


async def cancel_or_last(call: Call, parse: Parser[_R]) -> _R | None:
    """CANCEL_OR_LAST: the first :class:`Cancel` wins at once; otherwise the last answer."""
    kept: _R | None = None
    for handler in call.handlers:
        result = await _isolated(call, handler, parse)
        if result is not None and _is_cancel(result):
            return result
        if result is not None:
            kept = result
    return kept


async def first_block(call: Call, parse: Parser[_R]) -> _R | None:
    """FIRST_BLOCK: the first answer wins; a raise (or a wrong shape, or no answer in time)
    propagates.

    A raise is the plugin's way to block (the reference's semantics: its message is the error
    the model sees), so it is not a failure to report. A wrong shape or a missed deadline is a
    bug in the plugin: it blocks too, never waving the call through, and is reported like under
    every other rule, so the author learns which plugin and hook it was.
    """
    for handler in call.handlers:
        try:
            value = await _invoke(call, handler)
            result = _parsed(value, parse)
        except (ResultError, HookTimeout) as error:
            _report(call, handler, error)
            raise
        if result is not None:
            return result
    return None


async def first_result(call: Call, parse: Parser[_R]) -> _R | None:
    """FIRST_RESULT: the first answer wins."""
    for handler in call.handlers:
        result = await _isolated(call, handler, parse)
        if result is not None:
            return result
    return None


async def last_result(call: Call, parse: Parser[_R]) -> _R | None:
    """LAST_RESULT: the last answer wins, so a later-loaded plugin overrides an earlier one."""
    kept: _R | None = None
    for handler in call.handlers:
        result = await _isolated(call, handler, parse)
        if result is not None:
            kept = result
    return kept


async def transform_chain(call: Call, chained: str, parse: Parser[_V]) -> _V:
    """TRANSFORM_CHAIN: each answer replaces the ``chained`` argument for the next handler;
    the final value is the result.
    """
    for handler in call.handlers:
        result = await _isolated(call, handler, parse)
        if result is not None:
            call.kwargs[chained] = result
    return call.kwargs[chained]  # type: ignore[return-value]


async def patch_chain(call: Call) -> ToolResultPatch | None:
    """PATCH_CHAIN: patches apply field by field; each handler sees the patched values. The
    result is the combined patch (None when nobody patched).
    """
    from knightcode._plugins.results import UNCHANGED, ToolResultPatch

    patched = False
    for handler in call.handlers:
        patch = await _isolated(call, handler, parse_patch)
        if patch is None:
            continue
        for name in ("content", "details", "is_error"):
            value = getattr(patch, name)
            if value is not UNCHANGED:
                call.kwargs[name] = value
                patched = True
    if not patched:
        return None
    return ToolResultPatch(
        call.kwargs["content"],  # type: ignore[arg-type]
        call.kwargs["details"],
        call.kwargs["is_error"],  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class AgentStartOutcome:
    """``before_agent_start`` combined: every handler's message, and the final system prompt."""

    messages: list[PluginMessage]
    system_prompt: str


async def collect_and_chain(call: Call) -> AgentStartOutcome:
    """COLLECT_AND_CHAIN: messages collected in load order, ``system_prompt`` chained."""
    messages: list[PluginMessage] = []
    for handler in call.handlers:
        changes = await _isolated(call, handler, parse_agent_start)
        if changes is None:
            continue
        if changes.message is not None:
            messages.append(changes.message)
        if changes.system_prompt is not None:
            call.kwargs["system_prompt"] = changes.system_prompt
    return AgentStartOutcome(messages, str(call.kwargs["system_prompt"]))


@dataclass(frozen=True)
class InputOutcome:
    """``input`` combined: ``handled`` (stop here) or the (possibly transformed) input."""

    handled: bool
    text: str
    images: list[object]


async def input_chain(call: Call) -> InputOutcome:
    """INPUT_CHAIN: transforms chain (text and images); the first :class:`Handled` stops."""
    from knightcode._plugins.results import Handled, Transform

    for handler in call.handlers:
        result = await _isolated(call, handler, parse_input)
        if isinstance(result, Handled):
            return InputOutcome(True, str(call.kwargs["text"]), list(_list(call.kwargs["images"])))
        if isinstance(result, Transform):
            call.kwargs["text"] = result.text
            if result.images is not None:
                call.kwargs["images"] = list(result.images)
    return InputOutcome(False, str(call.kwargs["text"]), list(_list(call.kwargs["images"])))


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


async def collect(call: Call, parse: Parser[_R]) -> list[_R]:
    """COLLECT: every handler's answer, in load order."""
    found: list[_R] = []
    for handler in call.handlers:
        result = await _isolated(call, handler, parse)
        if result is not None:
            found.append(result)
    return found
