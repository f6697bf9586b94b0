"""Handlers of the prompting, state, model, queue, compaction and retry commands.

A handler receives the :class:`RpcContext` and the validated command (the pydantic model of its
command type) and returns the response's ``data`` (a ``TypedDict`` of
:mod:`knightcode.rpc._types`, or :data:`~knightcode._modes.rpc.responses.NO_DATA` for none);
raising answers the command with an error response carrying the exception's message. Handlers
that never wait are plain functions: the server answers them inline, in the same loop iteration
the line arrived in, which keeps ``get_state`` fast while a stream keeps the loop busy.

Handlers are registered with the command model they take (``@_handles(c.SetModel,
"set_model")``), so the type checker holds each handler to its model and its response shape,
and the registry checks at import time that the model is the one :data:`~.commands.COMMANDS`
validates that command with.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeAlias, TypeVar

from knightcode._abort import Aborted, AbortSignal
from knightcode._modes.rpc import commands as c
from knightcode._modes.rpc.responses import (
    ANSWERED,
    NO_DATA,
    NoData,
    Record,
    Reply,
    Sentinel,
    model_json,
    state_json,
    success,
)

if TYPE_CHECKING:
    from typing import Literal

    from knightcode._agent.session import AgentSession
    from knightcode._plugins.commands import PluginCommand
    from knightcode._plugins.host import PluginHost
    from knightcode._types.events import CompactionResult, SessionEvent
    from knightcode.rpc._types import (
        CycleModelResult,
        MessageList,
        ModelInfo,
        ModelList,
        State,
        ThinkingLevelResult,
    )

__all__ = ["HANDLERS", "Handler", "Route", "RpcContext", "handles"]


@dataclass
class RpcContext:
    """What handlers work with.

    :param agent: the session the commands drive
    :param host: the plugin host
    :param write: writes one record to stdout
    :param spawn: runs a coroutine as a task the server waits for at shutdown
    """

    agent: AgentSession
    host: PluginHost
    write: Callable[[Record], None]
    spawn: Callable[[Coroutine[object, object, object]], asyncio.Task[object]]
    bash_signals: set[AbortSignal] = field(default_factory=set)
    """Abort signals of the running ``bash`` commands (``abort_bash`` sets them all)."""
    lookup_signals: set[AbortSignal] = field(default_factory=set)
    """Abort signals of the model look-ups in progress outside a run (``abort`` sets them)."""
    stopping: bool = False
    """The server is shutting down: a look-up starting now is aborted at once."""
    retrying: bool = False
    """Between ``auto_retry_start`` and the retried attempt: ``abort_retry`` has work to do."""
    _name: tuple[tuple[int, str, str | None] | None, str | None] = (None, None)

    def session_name(self) -> str | None:
        """The session's name, looked up again only when the session or its leaf changed:
        the lookup walks every entry, and ``get_state`` must stay cheap on long sessions.
        """
        session = self.agent.session
        key = (id(session), session.session_id, session.leaf_id)
        if self._name[0] != key:
            self._name = (key, session.session_name)
        return self._name[1]

    @contextmanager
    def lookup(self) -> Iterator[AbortSignal]:
        """A signal for a command that may ask a live model server (discovery) while no run is
        in progress, so that ``abort`` (and shutdown) reach that call too. An abort becomes the
        command's error response.
        """
        signal = AbortSignal()
        if self.stopping:
            signal.abort()
        self.lookup_signals.add(signal)
        try:
            yield signal
        except Aborted:
            raise ValueError("Model discovery aborted") from None
        finally:
            self.lookup_signals.discard(signal)

    def abort_lookups(self) -> None:
        """Abort the model look-ups in progress (see :meth:`lookup`)."""
        for signal in list(self.lookup_signals):
            signal.abort()

    def on_event(self, event: SessionEvent) -> None:
        """Keep :attr:`retrying` up to date (subscribed to the session's events)."""
        kind = event["type"]
        if kind == "auto_retry_start":
            self.retrying = True
        elif kind in ("agent_start", "auto_retry_end", "agent_settled"):
            self.retrying = False


C = TypeVar("C", bound=c.RpcCommand)
R = TypeVar("R", bound="Reply | Awaitable[Reply]")

Handler: TypeAlias = Callable[[RpcContext, c.RpcCommand], "Reply | Awaitable[Reply]"]
"""``handler(ctx, command) -> data``, or an awaitable of it for ``async def`` handlers: what
the server calls, for any command."""


@dataclass(frozen=True)
class Route(Generic[C]):
    """A handler and the command model it takes; calling the route checks the model first.

    The server only passes commands :func:`~.commands.parse_line` validated with
    ``COMMANDS[type]``, which :func:`handles` made sure is ``model``, so the check never fails
    in practice; it is what lets the type checker see the handler get the model it declares.
    """

    model: type[C]
    run: Callable[[RpcContext, C], Reply | Awaitable[Reply]]

    def __call__(self, ctx: RpcContext, command: c.RpcCommand) -> Reply | Awaitable[Reply]:
        if not isinstance(command, self.model):
            raise TypeError(f"{command.type}: expected a {self.model.__name__} command")
        return self.run(ctx, command)


def handles(
    registry: dict[str, Handler], model: type[C], *kinds: str
) -> Callable[[Callable[[RpcContext, C], R]], Callable[[RpcContext, C], R]]:
    """A decorator registering a handler of ``model`` commands for each of ``kinds``."""
    for kind in kinds:
        if c.COMMANDS.get(kind) is not model:
            raise TypeError(
                f"'{kind}' commands are validated as {c.COMMANDS.get(kind)}, not {model}"
            )

    def register(function: Callable[[RpcContext, C], R]) -> Callable[[RpcContext, C], R]:
        route = Route(model, function)
        for kind in kinds:
            registry[kind] = route
        return function

    return register


HANDLERS: dict[str, Handler] = {}


def _handles(
    model: type[C], *kinds: str
) -> Callable[[Callable[[RpcContext, C], R]], Callable[[RpcContext, C], R]]:
    return handles(HANDLERS, model, *kinds)


# --- prompting --------------------------------------------------------------------------------


def plugin_command(ctx: RpcContext, text: str) -> PluginCommand | None:
    """The plugin command ``text`` invokes (``/name args``), or None."""
    from knightcode._plugins.commands import find_plugin_command

    return find_plugin_command(ctx.host, text)


async def run_plugin_command(ctx: RpcContext, command: PluginCommand) -> None:
    """Run a plugin's slash command; a raising handler becomes an ``extension_error`` record
    and the session goes on.
    """
    failure = await command.run(ctx.host)
    if failure is not None:
        ctx.write(failure)


@_handles(c.Prompt, "prompt")
async def prompt(ctx: RpcContext, command: c.Prompt) -> NoData | Literal[Sentinel.ANSWERED]:
    """Answers once the prompt is accepted (running, queued or handled); what happens later
    arrives as events (the reference's 0.73 behaviour).
    """
    found = plugin_command(ctx, command.message)
    if found is not None:
        # Plugin commands run at once, even while the agent streams (they drive it themselves).
        await run_plugin_command(ctx, found)
        return NO_DATA
    accepted: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_accepted() -> None:
        # Synchronously inside prompt(), before any record of the run: the response comes first.
        if not accepted.done():
            ctx.write(success(command.id, "prompt"))
            accepted.set_result(None)

    async def run() -> None:
        try:
            await ctx.agent.prompt(
                command.message,
                command.image_dicts(),
                source="rpc",
                streaming_behavior=command.streamingBehavior,
                on_accepted=on_accepted,
            )
        except Exception as error:
            if accepted.done():
                # The client already has its success response; later failures are stderr's.
                print(f"knightcode: prompt failed: {error}", file=sys.stderr)
            else:
                accepted.set_exception(error)
        else:
            on_accepted()  # never leave the command unanswered

    ctx.spawn(run())
    await accepted  # AgentBusyError and other refusals become this command's error response
    return ANSWERED


def _queue_check(ctx: RpcContext, text: str) -> None:
    if plugin_command(ctx, text) is not None:
        raise ValueError(
            f"Plugin commands cannot be queued; send {text.split(' ', 1)[0]} as a 'prompt' instead"
        )


@_handles(c.Steer, "steer")
def steer(ctx: RpcContext, command: c.Steer) -> NoData:
    _queue_check(ctx, command.message)
    ctx.agent.steer(ctx.agent.expand(command.message), command.image_dicts())
    return NO_DATA


@_handles(c.FollowUp, "follow_up")
def follow_up(ctx: RpcContext, command: c.FollowUp) -> NoData:
    _queue_check(ctx, command.message)
    ctx.agent.follow_up(ctx.agent.expand(command.message), command.image_dicts())
    return NO_DATA


@_handles(c.RpcCommand, "abort")
async def abort(ctx: RpcContext, command: c.RpcCommand) -> NoData:
    """Answers once the aborted run has settled, as the reference does. A model look-up that
    waits for a live server (``get_available_models``, ``set_model``) is aborted too.
    """
    ctx.abort_lookups()
    ctx.agent.abort()
    await ctx.agent.wait_idle()
    return NO_DATA


# --- state --------------------------------------------------------------------------------------


@_handles(c.RpcCommand, "get_state")
def get_state(ctx: RpcContext, command: c.RpcCommand) -> State:
    return state_json(ctx.agent, ctx.session_name())


@_handles(c.RpcCommand, "get_messages")
def get_messages(ctx: RpcContext, command: c.RpcCommand) -> MessageList:
    return {"messages": list(ctx.agent.messages)}


# --- model and thinking level -------------------------------------------------------------------


@_handles(c.SetModel, "set_model")
async def set_model(ctx: RpcContext, command: c.SetModel) -> ModelInfo:
    with ctx.lookup() as signal:
        model = await ctx.agent.model_registry.find(
            command.provider, command.modelId, signal=signal
        )
    if model is None:
        # A discovering provider (llama.cpp) knows why a model it lists cannot be selected.
        reason = ctx.agent.model_registry.unavailable_reason(command.provider, command.modelId)
        raise ValueError(reason or f"Model not found: {command.provider}/{command.modelId}")
    await ctx.agent.set_model(model, source="set")
    return model_json(model)


@_handles(c.RpcCommand, "cycle_model")
async def cycle_model(ctx: RpcContext, command: c.RpcCommand) -> CycleModelResult | None:
    """The next model after the current one, among those of the model scope (``--models``, else
    settings ``enabledModels``) when it matches any (``isScoped``), else all available; ``null``
    when there is no other. A pattern's ``:LEVEL`` sets the thinking level of its model.
    """
    from knightcode._modes.model_scope import resolve_scope, scope_patterns

    available = ctx.agent.model_registry.available()
    scope = resolve_scope(available, scope_patterns(ctx.host))
    scoped = scope.models
    models = scoped or available
    current = ctx.agent.model
    others = [m for m in models if (m.provider, m.id) != (current.provider, current.id)]
    if not others:
        return None
    keys = [(m.provider, m.id) for m in models]
    index = (
        keys.index((current.provider, current.id)) if (current.provider, current.id) in keys else -1
    )
    chosen = models[(index + 1) % len(models)]
    await ctx.agent.set_model(chosen, source="cycle")
    level = scope.matches[(index + 1) % len(models)].thinking if scoped else None
    if level is not None:
        await ctx.agent.set_thinking_level(level)
    return {
        "model": model_json(chosen),
        "thinkingLevel": ctx.agent.thinking_level,
        "isScoped": bool(scoped),
    }


@_handles(c.RpcCommand, "get_available_models")
async def get_available_models(ctx: RpcContext, command: c.RpcCommand) -> ModelList:
    # Live providers (a llama.cpp router) may have loaded or unloaded models since start-up.
    with ctx.lookup() as signal:
        await ctx.agent.model_registry.refresh_models(signal=signal)
    return {"models": [model_json(model) for model in ctx.agent.model_registry.available()]}


@_handles(c.SetThinkingLevel, "set_thinking_level")
async def set_thinking_level(ctx: RpcContext, command: c.SetThinkingLevel) -> NoData:
    await ctx.agent.set_thinking_level(command.level)
    return NO_DATA


@_handles(c.RpcCommand, "cycle_thinking_level")
async def cycle_thinking_level(
    ctx: RpcContext, command: c.RpcCommand
) -> ThinkingLevelResult | None:
    """The next level of off → minimal → low → medium → high; ``null`` for a model that does
    not reason.
    """
    if not ctx.agent.model.reasoning:
        return None
    from knightcode._agent.thinking_switch import next_thinking_level

    await ctx.agent.set_thinking_level(
        next_thinking_level(ctx.agent.model, ctx.agent.thinking_level)
    )
    return {"level": ctx.agent.thinking_level}


# --- queues, compaction, retry ------------------------------------------------------------------


@_handles(c.SetQueueMode, "set_steering_mode")
def set_steering_mode(ctx: RpcContext, command: c.SetQueueMode) -> NoData:
    ctx.agent.set_steering_mode(command.mode)
    return NO_DATA


@_handles(c.SetQueueMode, "set_follow_up_mode")
def set_follow_up_mode(ctx: RpcContext, command: c.SetQueueMode) -> NoData:
    ctx.agent.set_follow_up_mode(command.mode)
    return NO_DATA


@_handles(c.Compact, "compact")
async def compact(ctx: RpcContext, command: c.Compact) -> CompactionResult | None:
    """The compaction result; an error response when no compaction plugin is loaded."""
    verdict = await ctx.agent.compact(command.customInstructions)
    if verdict.aborted:
        raise ValueError("Compaction cancelled")
    if not verdict.compacted and verdict.error_message:
        raise ValueError(verdict.error_message)
    return verdict.result


@_handles(c.SetEnabled, "set_auto_compaction")
def set_auto_compaction(ctx: RpcContext, command: c.SetEnabled) -> NoData:
    ctx.agent.set_auto_compaction(command.enabled)
    return NO_DATA


@_handles(c.SetEnabled, "set_auto_retry")
def set_auto_retry(ctx: RpcContext, command: c.SetEnabled) -> NoData:
    ctx.agent.set_auto_retry(command.enabled)
    return NO_DATA


@_handles(c.RpcCommand, "abort_retry")
def abort_retry(ctx: RpcContext, command: c.RpcCommand) -> NoData:
    """Cancels a pending retry (the run ends with ``auto_retry_end`` ``success: false``)."""
    if ctx.retrying:
        ctx.agent.abort()
    return NO_DATA
