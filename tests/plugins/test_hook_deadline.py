"""The hook deadline and the run's abort, in process: what happens to a handler that waits, one
that blocks the loop, a built-in plugin's, and one in a dialog (the executable's behaviour under
signals is tested in tests/agent/test_hook_bounds.py and tests/rpc/test_rpc_hook_bounds.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
import types
from collections.abc import Callable
from typing import Any

import pytest

from knightcode import Block, HookContext, hookimpl
from knightcode._abort import Aborted, AbortSignal
from knightcode._plugins import dispatch
from knightcode._plugins.context import HeadlessUI
from knightcode._plugins.dispatch import Call, Handler
from knightcode._plugins.host import PluginFailure, PluginHost
from knightcode._plugins.parsing import parse_block
from knightcode._plugins.records import PluginKind
from knightcode._plugins.watchdog import GRACE, INLINE, TICK, HookTimeout, watching


def plugin(**hooks: Any) -> types.SimpleNamespace:
    return types.SimpleNamespace(**{name: hookimpl(function) for name, function in hooks.items()})


@pytest.fixture
def host(make_host: Callable[..., PluginHost]) -> PluginHost:
    host = make_host()
    host.hook_timeout = 0.1
    return host


async def test_a_handler_waiting_past_the_deadline_is_reported_and_skipped(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    calls: list[str] = []

    async def slow(ctx: HookContext) -> None:
        await asyncio.sleep(10)
        calls.append("slow finished")

    host.add_plugin(plugin(agent_start=slow), "slow")
    host.add_plugin(plugin(agent_start=lambda: calls.append("next") and None), "next")
    started = time.monotonic()
    await host.hooks.agent_start()
    assert time.monotonic() - started < 1
    assert calls == ["next"]
    assert [(f.plugin, f.event, f.error) for f in failures] == [
        ("slow", "agent_start", "HookTimeout: did not answer within 0.1 s (hookTimeoutMs)")
    ]
    assert INLINE == []


async def test_a_guard_past_the_deadline_blocks_the_call(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    async def guard() -> None:
        await asyncio.sleep(10)

    host.add_plugin(plugin(tool_call=guard), "guard")
    with pytest.raises(HookTimeout, match=r"did not answer within 0\.1 s"):
        await host.hooks.tool_call(tool_call_id="c", tool_name="bash", input={})
    assert [(f.plugin, f.event) for f in failures] == [("guard", "tool_call")]


def stuck(ctx: HookContext) -> None:
    time.sleep(10)


async def sneaky(ctx: HookContext) -> None:
    await asyncio.sleep(0)
    time.sleep(10)  # blocks the loop after its first wait


@pytest.mark.parametrize("handler", [stuck, sneaky], ids=["plain", "async-after-a-wait"])
async def test_a_handler_blocking_the_loop_is_interrupted_at_the_deadline(
    host: PluginHost, failures: list[PluginFailure], handler: Callable[..., object]
) -> None:
    host.add_plugin(plugin(agent_start=handler), "blocking")
    started = time.monotonic()
    with watching():
        await host.hooks.agent_start()
    assert time.monotonic() - started < 0.1 + TICK + 0.5  # the watchdog looks once a TICK
    assert [(f.plugin, f.error) for f in failures] == [
        ("blocking", "HookTimeout: did not answer within 0.1 s (hookTimeoutMs)")
    ]
    assert INLINE == []


async def test_built_in_plugins_have_no_deadline(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    async def summarise() -> Block:
        await asyncio.sleep(0.3)
        return Block("took its time")

    host.add_plugin(plugin(tool_call=summarise), "builtin:slow", kind=PluginKind.BUILTIN)
    assert [handler.bounded for handler in host.handlers("tool_call")] == [False]
    verdict = await host.hooks.tool_call(tool_call_id="c", tool_name="bash", input={})
    assert verdict == Block("took its time") and failures == []


class SlowUI(HeadlessUI):
    """A user who takes a while to confirm."""

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        await asyncio.sleep(0.4)
        return True


async def test_time_in_a_dialog_does_not_count(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    async def ask(ctx: HookContext) -> Block | None:
        if await ctx.ui.confirm("Run?", "sure?"):
            await asyncio.sleep(0.05)  # and then the handler's own time counts again
            return Block("asked")
        return None

    assert host.context is not None
    host.context.bind_ui(SlowUI(), has_ui=True)
    host.add_plugin(plugin(tool_call=ask), "asking")
    verdict = await host.hooks.tool_call(tool_call_id="c", tool_name="bash", input={})
    assert verdict == Block("asked") and failures == []


# --- the run's abort (a context with a signal, as while a session runs) ---------------------------


def fire(handler: Callable[..., object], signal: AbortSignal, reported: list[str]) -> Call:
    return Call(
        "tool_call",
        (Handler("p", handler, ("ctx",)),),
        {"ctx": types.SimpleNamespace(signal=signal)},
        lambda plugin, hook, error: reported.append(f"{plugin} {hook} {error}"),
        limit=10.0,
    )


async def test_aborting_the_run_stops_a_waiting_handler_unreported() -> None:
    signal, reported = AbortSignal(), []

    async def waits(ctx: Any) -> None:
        await asyncio.sleep(10)

    asyncio.get_running_loop().call_later(0.05, signal.abort)
    started = time.monotonic()
    with pytest.raises(Aborted):
        await dispatch.first_block(fire(waits, signal, reported), parse_block)
    assert time.monotonic() - started < 1 and reported == []


async def test_a_handler_waiting_in_its_own_scope_is_told_aborted_and_may_answer() -> None:
    signal, reported = AbortSignal(), []

    async def careful(ctx: Any) -> Block:
        try:
            async with ctx.signal.scope():
                await asyncio.sleep(10)
        except Aborted:
            await asyncio.sleep(0.01)  # cleaning up is not cut short
            return Block("stopped by the abort")
        return Block("never")

    asyncio.get_running_loop().call_later(0.05, signal.abort)
    verdict = await dispatch.first_block(fire(careful, signal, reported), parse_block)
    assert verdict == Block("stopped by the abort") and reported == []


async def test_a_handler_entering_its_scope_after_waiting_is_told_aborted_too() -> None:
    signal, reported = AbortSignal(), []

    async def careful(ctx: Any) -> Block:
        await asyncio.sleep(0)  # the bounded wait begins before the scope below
        try:
            async with ctx.signal.scope():
                await asyncio.sleep(10)
        except Aborted:
            await asyncio.sleep(0.01)
            return Block("stopped by the abort")
        return Block("never")

    asyncio.get_running_loop().call_later(0.05, signal.abort)
    verdict = await dispatch.first_block(fire(careful, signal, reported), parse_block)
    assert verdict == Block("stopped by the abort") and reported == []


# --- a handler that will not stop: abandoned after the grace --------------------------------------


async def test_a_handler_swallowing_its_cancellation_is_abandoned_after_the_grace(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    finished: list[str] = []

    async def stubborn(ctx: HookContext) -> None:
        try:
            while True:
                with contextlib.suppress(asyncio.CancelledError):  # the point: it will not stop
                    await asyncio.sleep(10)
        finally:
            finished.append("finally ran")

    host.add_plugin(plugin(agent_start=stubborn), "stubborn")
    started = time.monotonic()
    await host.hooks.agent_start()
    elapsed = time.monotonic() - started
    assert GRACE <= elapsed < GRACE + 1
    gc.collect()
    await asyncio.sleep(0.05)
    assert finished == []  # abandoned for good: never resumed, not even to close it
    assert [(f.plugin, f.error) for f in failures] == [
        ("stubborn", "HookTimeout: did not answer within 0.1 s (hookTimeoutMs)")
    ]


async def test_cleaning_up_within_the_grace_is_not_cut_short(
    host: PluginHost, failures: list[PluginFailure]
) -> None:
    cleaned: list[str] = []

    async def tidy(ctx: HookContext) -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # closing a connection, say
            cleaned.append("closed")
            raise

    host.add_plugin(plugin(agent_start=tidy), "tidy")
    started = time.monotonic()
    await host.hooks.agent_start()
    assert time.monotonic() - started < GRACE
    assert cleaned == ["closed"] and [f.plugin for f in failures] == ["tidy"]


async def test_aborting_the_run_abandons_a_handler_that_ignores_it() -> None:
    signal, reported = AbortSignal(), []

    async def stubborn(ctx: Any) -> None:
        while True:  # swallows even GeneratorExit: closing it would never end
            with contextlib.suppress(BaseException):
                await asyncio.sleep(10)

    asyncio.get_running_loop().call_later(0.05, signal.abort)
    started = time.monotonic()
    with pytest.raises(Aborted):
        await dispatch.first_block(fire(stubborn, signal, reported), parse_block)
    assert time.monotonic() - started < GRACE + 1 and reported == []
