"""One way to cancel, proven: aborting reaches each kind of waiting work within 100 ms.

Each test starts the work for real (a streamed reply from the scripted loopback server, a
``bash`` process, a retry backoff, a summary request, a discovery call to a loopback server that
never answers), waits generously until it is really waiting, aborts, and measures with
``time.monotonic()`` how long it takes until the work has ended with its outcome recorded as
aborted. Every measurement is repeated (:data:`REPEATS`) and the worst one must stay under
:data:`ABORT_BOUND` (0.1 s).

Start-up has no run and so no signal: there, cancelling the task (Ctrl-C) is the way, and it
reaches a discovery call just as fast. The last test checks that cancelling a run owns its
parallel tool calls: nothing is left running.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal as signals
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import httpx
import pytest

from knightcode import Aborted, AbortSignal, OnUpdate, RetrySettings, ToolContext, hookimpl
from knightcode._llm.discovery import DiscoveredModels, DiscoveryError, ProviderAccess
from knightcode._llm.registry import ModelRegistry
from knightcode._llm.types import Model
from knightcode._plugins.definitions import ProviderDefinition
from knightcode.testing import error_reply, text_reply, tool_call, tool_call_reply, usage

from .harness import MODEL, Builder, Event, Run, bounded, make_tool, result_text, text_of
from .silent import ABORT_BOUND, REPEATS, SilentServer, abort_and_time

COMPACTION_SETTINGS: dict[str, object] = {
    "compaction": {"reserveTokens": 2000, "keepRecentTokens": 50}
}


def is_text_delta(event: Event) -> bool:
    return bool(
        event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta"
    )


def assert_fast(latencies: list[float], what: str) -> None:
    worst = max(latencies)
    shown = ", ".join(f"{seconds * 1000:.1f}" for seconds in latencies)
    assert worst < ABORT_BOUND, f"{what}: abort took {worst * 1000:.1f} ms at worst ({shown} ms)"


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    with SilentServer() as server:
        yield server


# --- a provider stream ------------------------------------------------------------------------


async def test_abort_reaches_a_provider_stream_within_100_ms(scenario: Builder) -> None:
    s = await scenario()
    latencies = []
    for attempt in range(REPEATS):
        # Half a second between events: an abort noticed only at the next event would be late.
        s.server.add(text_reply(*["tick "] * 40, delay=0.5))
        first_delta = s.when(is_text_delta)
        run = asyncio.ensure_future(s.agent.prompt(f"count slowly {attempt}"))
        await bounded(first_delta.wait())
        await asyncio.sleep(0.05 * attempt)  # anywhere between two events
        latencies.append(await abort_and_time(s.agent.abort, run))
        run.result()
        final = s.of_type("message_end")[-1]["message"]
        assert final["role"] == "assistant" and final["stopReason"] == "aborted"
        assert final["errorMessage"] == "Request was aborted"
        assert text_of(final).startswith("tick")
        assert s.events[-1] == {"type": "agent_settled", "aborted": True}
    assert_fast(latencies, "provider stream")


class SilentProvider:
    """A provider whose server accepts the request and never answers (not even a status)."""

    plugin_name = "silent-provider"

    def __init__(self, url: str) -> None:
        self.url = url

    @hookimpl
    def register_providers(self, register: Callable[..., None]) -> None:
        register(
            name="silent",
            api="openai-completions",
            base_url=self.url + "/v1",
            models=[{"id": "mute", "contextWindow": 32000, "maxTokens": 4096}],
        )


async def test_between_runs_the_signal_is_fresh_not_the_aborted_one(scenario: Builder) -> None:
    """Work a plugin starts between runs (a command, a session hook) waits in ``ctx.signal``: an
    earlier run's abort must not stop it before it starts.
    """
    s = await scenario()
    s.server.add(text_reply(*["tick "] * 40, delay=0.5))
    first_delta = s.when(is_text_delta)
    run = asyncio.ensure_future(s.agent.prompt("count slowly"))
    await bounded(first_delta.wait())
    during = s.ctx.signal
    assert during is not None and during is s.agent.signal
    await abort_and_time(s.agent.abort, run)
    assert during.aborted
    between = s.ctx.signal
    assert between is not None and not between.aborted and between is not during
    s.agent.abort()  # no run: nothing to stop
    assert not between.aborted
    s.server.add(text_reply("done"))
    await s.agent.prompt("again")
    assert s.of_type("message_end")[-1]["message"]["stopReason"] == "stop"


async def test_abort_reaches_a_request_still_waiting_for_its_response(
    scenario: Builder, silent: SilentServer
) -> None:
    s = await scenario(plugins=[SilentProvider(silent.url)], provider="silent", model="mute")
    latencies = []
    for attempt in range(REPEATS):
        run = asyncio.ensure_future(s.agent.prompt(f"hello {attempt}"))
        await silent.requests_arrived(attempt + 1)
        latencies.append(await abort_and_time(s.agent.abort, run))
        run.result()
        final = s.of_type("message_end")[-1]["message"]
        assert final["stopReason"] == "aborted"
    assert_fast(latencies, "request waiting for its response")


# --- a running tool ---------------------------------------------------------------------------


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to reap it counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("ignores_sigterm", [False, True], ids=["plain", "ignoring-SIGTERM"])
async def test_abort_reaches_a_running_bash_command_within_100_ms(
    scenario: Builder, project_dir: Path, ignores_sigterm: bool
) -> None:
    s = await scenario(builtin=["bash"])
    latencies = []
    for attempt in range(REPEATS):
        pids_file = project_dir / f"pids{attempt}"
        # The shell (the group leader) waits for a sleep in the foreground, one in the background;
        # with ``trap '' TERM`` all three ignore SIGTERM, so only SIGKILL stops them.
        trap = "trap '' TERM; " if ignores_sigterm else ""
        command = f"{trap}sleep 30 & echo $$ $! > {pids_file.name}; sleep 30"
        s.server.add(tool_call_reply([tool_call(f"b{attempt}", "bash", {"command": command})]))
        run = asyncio.ensure_future(s.agent.prompt(f"run it {attempt}"))
        while not pids_file.exists() or len(pids_file.read_text().split()) < 2:
            await asyncio.sleep(0.01)
            assert not run.done(), "the run ended before the command started"
        pids = [int(pid) for pid in pids_file.read_text().split()]
        assert all(alive(pid) for pid in pids)
        ended = await abort_and_time(s.agent.abort, run)
        run.result()
        end = s.of_type("tool_execution_end")[-1]
        assert end["toolCallId"] == f"b{attempt}" and end["isError"] is True
        assert "Command aborted" in result_text(end)
        # The whole process group is gone: the shell and both sleeps. A process that closed its
        # end of the pipe (so the tool saw the end of its output) may still be finishing its
        # exit for a moment: the time until it is gone counts too.
        gone = await _time_until_dead(pids)
        latencies.append(ended + gone)
        assert s.events[-1] == {"type": "agent_settled", "aborted": True}
    assert_fast(latencies, "running bash command")


async def _time_until_dead(pids: list[int]) -> float:
    """Seconds until none of ``pids`` (nor any member of the group ``pids[0]`` leads) is alive;
    fails after a second.
    """
    started = time.monotonic()
    while any(alive(pid) for pid in pids) or _group_has_live_members(pids[0]):
        assert time.monotonic() - started < 1.0, f"still running: {pids}"
        await asyncio.sleep(0.001)
    return time.monotonic() - started


def _group_has_live_members(pgid: int) -> bool:
    """Whether a live (non-zombie) process of process group ``pgid`` exists."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[-1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


async def test_abort_does_not_wait_for_a_process_that_left_the_group(
    scenario: Builder, project_dir: Path
) -> None:
    """A process that made itself a session of its own (``setsid``) is out of the group's reach
    and keeps the output pipe open; the aborted tool still ends at once.
    """
    s = await scenario(builtin=["bash"])
    latencies = []
    escaped: list[int] = []
    try:
        for attempt in range(REPEATS):
            pid_file = project_dir / f"escaped{attempt}"
            command = f"setsid sleep 30 & echo $! > {pid_file.name}; sleep 30"
            s.server.add(tool_call_reply([tool_call(f"e{attempt}", "bash", {"command": command})]))
            run = asyncio.ensure_future(s.agent.prompt(f"run it {attempt}"))
            while not pid_file.exists() or not pid_file.read_text().strip():
                await asyncio.sleep(0.01)
            escaped.append(int(pid_file.read_text()))
            await asyncio.sleep(0.05)  # the escaped sleep has called setsid()
            latencies.append(await abort_and_time(s.agent.abort, run))
            run.result()
            assert "Command aborted" in result_text(s.of_type("tool_execution_end")[-1])
            assert alive(escaped[-1])  # out of reach, as expected: it is not what we wait for
    finally:
        for pid in escaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signals.SIGKILL)
    assert_fast(latencies, "bash command with an escaped process")


# --- a retry wait -----------------------------------------------------------------------------


async def test_abort_reaches_a_retry_wait_within_100_ms(scenario: Builder) -> None:
    s = await scenario(retry=RetrySettings(base_delay_ms=30000, max_retries=3))
    latencies = []
    for attempt in range(REPEATS):
        s.server.add(error_reply(503, "Service unavailable"))
        waiting = s.when(lambda e: e["type"] == "auto_retry_start")
        run = asyncio.ensure_future(s.agent.prompt(f"question {attempt}"))
        await bounded(waiting.wait())
        await asyncio.sleep(0.02)
        latencies.append(await abort_and_time(s.agent.abort, run))
        run.result()
        start = s.of_type("auto_retry_start")[-1]
        assert start["delayMs"] == 30000
        end = s.of_type("auto_retry_end")[-1]
        assert end["success"] is False and end["attempt"] == 1
        assert s.events[-1] == {"type": "agent_settled", "aborted": True}
    assert len(s.requests) == REPEATS  # no retried request went out
    assert_fast(latencies, "retry wait")


# --- a compaction -----------------------------------------------------------------------------


async def _history(run: Run) -> None:
    run.server.add(text_reply("answer one", usage=usage(input=100)))
    await bounded(run.agent.prompt("question one"))
    run.server.add(text_reply("answer two", usage=usage(input=200)))
    await bounded(run.agent.prompt("question two " + "b" * 400))


async def test_abort_reaches_a_compaction_summary_within_100_ms(build: Builder) -> None:
    run = await build(settings=COMPACTION_SETTINGS)
    await _history(run)
    latencies = []
    for _ in range(REPEATS):
        requests = len(run.server.requests)
        run.server.add(text_reply("## Goal", " slow", delay=5))
        compacting = asyncio.ensure_future(run.agent.compact())
        await asyncio.to_thread(run.server.wait_for_requests, requests + 1)
        await asyncio.sleep(0.02)
        latencies.append(await abort_and_time(run.agent.abort, compacting))
        verdict = compacting.result()
        assert verdict.aborted is True and verdict.compacted is False
        assert run.of_type("compaction_end")[-1] == {
            "type": "compaction_end",
            "reason": "manual",
            "aborted": True,
            "willRetry": False,
        }
    assert run.entries("compaction") == []
    assert run.failures == []
    assert_fast(latencies, "compaction summary")


class SlowCompactor:
    """A ``session_before_compact`` handler that asks its own (silent) server for the summary,
    waiting inside the signal's scope as the hook's documentation asks.
    """

    plugin_name = "slow-compactor"

    def __init__(self, url: str) -> None:
        self.url = url
        self.outcomes: list[str] = []

    @hookimpl
    async def session_before_compact(self, signal: AbortSignal) -> None:
        async with httpx.AsyncClient() as client:
            try:
                await signal.guard(client.get(self.url + "/summary"))
            except Aborted:
                self.outcomes.append("aborted")
                raise
        self.outcomes.append("answered")


async def test_abort_reaches_a_session_before_compact_handler_within_100_ms(
    build: Builder, silent: SilentServer
) -> None:
    compactor = SlowCompactor(silent.url)
    run = await build(settings=COMPACTION_SETTINGS, plugins=[compactor])
    await _history(run)
    requests = len(run.server.requests)
    latencies = []
    for attempt in range(REPEATS):
        compacting = asyncio.ensure_future(run.agent.compact())
        await silent.requests_arrived(attempt + 1)
        latencies.append(await abort_and_time(run.agent.abort, compacting))
        verdict = compacting.result()
        assert verdict.aborted is True and verdict.compacted is False
        assert run.of_type("compaction_end")[-1]["aborted"] is True
    assert compactor.outcomes == ["aborted"] * REPEATS
    assert len(run.server.requests) == requests  # the default summary was never asked for
    assert run.failures == []  # an abort is an outcome, not a plugin failure
    assert_fast(latencies, "session_before_compact handler")


# --- a model discovery call -------------------------------------------------------------------


class SilentDiscovery:
    """A discovering provider whose server never answers the models request."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.asked = 0
        self.ended: list[str] = []

    async def discover(self, access: ProviderAccess) -> DiscoveredModels:
        self.asked += 1
        try:
            async with httpx.AsyncClient() as client:
                response = await client.get(self.url + "/v1/models")
        except asyncio.CancelledError:
            self.ended.append("cancelled")
            raise
        except httpx.HTTPError as error:
            raise DiscoveryError(str(error)) from None
        ids = [item["id"] for item in response.json()["data"]]
        return DiscoveredModels([Model("live", i, i, "openai-completions", self.url) for i in ids])

    def definition(self) -> ProviderDefinition:
        return ProviderDefinition(name="live", api="openai-completions", discover=self.discover)


Lookup = Callable[[ModelRegistry, AbortSignal], Awaitable[object]]

LOOKUPS: dict[str, Lookup] = {
    "refresh_models": lambda registry, signal: registry.refresh_models(signal=signal),
    "find": lambda registry, signal: registry.find("live", "m1", signal=signal),
    "resolve": lambda registry, signal: registry.resolve("live/m1", signal=signal),
    "default_model": lambda registry, signal: registry.default_model("live", "m1", signal=signal),
}


@pytest.mark.parametrize("lookup", list(LOOKUPS))
async def test_abort_reaches_a_model_discovery_call_within_100_ms(
    lookup: str, agent_dir: Path, silent: SilentServer
) -> None:
    provider = SilentDiscovery(silent.url)
    registry = ModelRegistry(agent_dir, providers=[provider.definition()], environ={})
    latencies = []
    try:
        for attempt in range(REPEATS):
            signal = AbortSignal()
            work = asyncio.ensure_future(LOOKUPS[lookup](registry, signal))
            await silent.requests_arrived(attempt + 1)
            latencies.append(await abort_and_time(signal.abort, work))
            assert isinstance(work.exception(), Aborted)
    finally:
        await registry.aclose()
    assert provider.ended == ["cancelled"] * REPEATS  # the request itself was stopped
    assert registry.discovery_errors == {}  # an abort is not recorded as the server's failure
    assert_fast(latencies, f"model discovery ({lookup})")


async def test_cancelling_the_task_reaches_a_model_discovery_call_within_100_ms(
    agent_dir: Path, silent: SilentServer
) -> None:
    """No signal: start-up (``build_agent``) is stopped by cancelling its task (Ctrl-C)."""
    provider = SilentDiscovery(silent.url)
    registry = ModelRegistry(agent_dir, providers=[provider.definition()], environ={})
    latencies = []
    try:
        for attempt in range(REPEATS):
            work = asyncio.ensure_future(registry.resolve("live/m1"))
            await silent.requests_arrived(attempt + 1)
            latencies.append(await abort_and_time(work.cancel, work))
            assert work.cancelled()
    finally:
        await registry.aclose()
    assert provider.ended == ["cancelled"] * REPEATS
    assert_fast(latencies, "cancelled model discovery")


async def test_an_already_aborted_signal_asks_no_server(
    agent_dir: Path, silent: SilentServer
) -> None:
    provider = SilentDiscovery(silent.url)
    registry = ModelRegistry(agent_dir, providers=[provider.definition()], environ={})
    signal = AbortSignal()
    signal.abort()
    try:
        with pytest.raises(Aborted):
            await bounded(registry.refresh_models(signal=signal))
    finally:
        await registry.aclose()
    await asyncio.sleep(0.05)
    assert silent.received == 0 and provider.asked == 0


class LiveProvider:
    """Registers a :class:`SilentDiscovery` provider, the way a plugin does."""

    plugin_name = "live-provider"

    def __init__(self, provider: SilentDiscovery) -> None:
        self.provider = provider

    @hookimpl
    def register_providers(self, register: Callable[..., None]) -> None:
        register(self.provider.definition())


async def test_abort_reaches_the_model_lookup_of_a_resumed_session(
    scenario: Builder, silent: SilentServer, project_dir: Path
) -> None:
    """``switch_session`` looks up the model the resumed session recorded; a discovering
    provider asks its server. Aborting stops that wait and the current model is kept.
    """
    provider = SilentDiscovery(silent.url)
    s = await scenario(plugins=[LiveProvider(provider)], persist=True)
    s.server.add(text_reply("hi"))
    await bounded(s.agent.prompt("hello"))
    recorded = s.agent.session.session_file
    assert recorded is not None
    # The same conversation, but recorded with the live provider's model.
    lines = [json.loads(line) for line in recorded.read_text().splitlines()]
    for line in lines:
        if line["type"] == "model_change":
            line.update(provider="live", modelId="m1")
        elif line["type"] == "message" and line["message"]["role"] == "assistant":
            line["message"].update(provider="live", model="m1")
    resumed = project_dir / "resumed.jsonl"
    resumed.write_text("".join(json.dumps(line) + "\n" for line in lines))
    latencies = []
    for attempt in range(REPEATS):
        signal = AbortSignal()
        switching = asyncio.ensure_future(s.agent.switch_session(resumed, signal=signal))
        await silent.requests_arrived(attempt + 1)
        latencies.append(await abort_and_time(signal.abort, switching))
        assert switching.result() is False  # switched, not cancelled
        assert s.agent.session.session_file == resumed
        assert (s.agent.model.provider, s.agent.model.id) == ("scripted", MODEL)
    assert provider.ended == ["cancelled"] * REPEATS
    assert_fast(latencies, "model lookup of a resumed session")


async def test_cancelling_start_up_reaches_the_model_discovery_of_build_agent(
    scenario: Builder, silent: SilentServer
) -> None:
    """Start-up has no run (and no signal) yet: Ctrl-C cancels ``build_agent``'s task while
    ``--model live/m1`` is being looked up at the provider's server.
    """
    provider = SilentDiscovery(silent.url)
    latencies = []
    for attempt in range(REPEATS):
        building = asyncio.ensure_future(
            scenario(plugins=[LiveProvider(provider)], provider="live", model="m1")
        )
        await silent.requests_arrived(attempt + 1)
        latencies.append(await abort_and_time(building.cancel, building))
        assert building.cancelled()
    assert provider.ended == ["cancelled"] * REPEATS
    assert_fast(latencies, "start-up model discovery")


# --- shutdown: cancelling a run leaves nothing behind ------------------------------------------


async def test_cancelling_a_run_with_parallel_tools_leaves_no_task_behind(
    scenario: Builder,
) -> None:
    """Shutdown cancels the run's task (not its signal): the tool calls running in parallel,
    and their update pumps, end with it instead of running on unowned.
    """
    started: list[str] = []

    async def forever(
        call_id: str, args: dict[str, object], ctx: ToolContext, on_update: OnUpdate
    ) -> str:
        started.append(call_id)
        assert on_update is not None
        on_update({"content": [{"type": "text", "text": "working"}], "details": None})
        await asyncio.Event().wait()
        return "never"

    s = await scenario(tools=[make_tool("wait", forever)])
    s.server.add(
        tool_call_reply(
            [tool_call("w1", "wait", {"value": "a"}), tool_call("w2", "wait", {"value": "b"})]
        )
    )
    before = asyncio.all_tasks()
    run = asyncio.ensure_future(s.agent.prompt("wait for both"))
    while len(started) < 2:
        await asyncio.sleep(0.01)
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    await asyncio.sleep(0)
    left = asyncio.all_tasks() - before - {asyncio.current_task()}
    assert left == set()


async def test_outlast_reports_how_the_wait_ended_and_never_cancels_the_future() -> None:
    loop = asyncio.get_running_loop()
    signal = AbortSignal()
    done: asyncio.Future[int] = loop.create_future()
    loop.call_later(0.01, done.set_result, 1)
    assert await signal.outlast(done) == "done"
    slow: asyncio.Future[int] = loop.create_future()
    assert await signal.outlast(slow, 0.02) == "timed_out"
    loop.call_later(0.02, signal.abort)
    assert await signal.outlast(slow) == "aborted"
    assert not slow.cancelled()  # still there for the caller to end its own way
    slow.cancel()
