"""Abort (while streaming, while a tool runs, while waiting to retry) and automatic retry of
transient provider errors (the reference's agent-session-retry cases)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from knightcode import hookimpl
from knightcode._agent.retry import RetrySettings, retry_delay_ms
from knightcode.testing import drop_reply, error_reply, text_reply, tool_call, tool_call_reply
from tests.harness import (
    Builder,
    Scenario,
    bounded,
    result_text,
    text_of,
)


def retry_events(s: Scenario) -> list[dict[str, Any]]:
    return [e for e in s.events if e["type"].startswith("auto_retry")]


async def test_abort_while_streaming_records_an_aborted_message(scenario: Builder) -> None:
    s = await scenario(persist=True)
    s.server.add(text_reply(*["tick "] * 400, delay=0.02))
    first_delta = s.when(
        lambda e: (
            e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
        )
    )
    run = asyncio.ensure_future(s.agent.prompt("count slowly"))
    await bounded(first_delta.wait())
    started = time.monotonic()
    s.agent.abort()
    await bounded(run)
    assert time.monotonic() - started < 3
    final = s.of_type("message_end")[-1]["message"]
    assert final["role"] == "assistant" and final["stopReason"] == "aborted"
    assert text_of(final).startswith("tick")  # what streamed so far is kept
    assert s.types()[-4:] == ["message_end:assistant", "turn_end", "agent_end", "agent_settled"]
    assert s.of_type("agent_end")[-1]["willRetry"] is False
    assert s.events[-1] == {"type": "agent_settled", "aborted": True}
    assert retry_events(s) == []  # an abort is not retried
    entries = [e for e in s.session_lines() if e["type"] == "message"]
    assert entries[-1]["message"]["stopReason"] == "aborted"
    assert s.agent.is_streaming is False


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_abort_while_bash_runs_kills_its_process_group(
    scenario: Builder, project_dir: Path
) -> None:
    s = await scenario(builtin=["bash"])
    command = "sleep 60 & echo $! > sleeper.pid; echo started; wait"
    s.server.add(
        tool_call_reply([tool_call("b1", "bash", {"command": command})]), text_reply("never")
    )
    output = s.when(
        lambda e: (
            e["type"] == "tool_execution_update" and "started" in result_text(e["partialResult"])
        )
    )
    run = asyncio.ensure_future(s.agent.prompt("run it"))
    await bounded(output.wait())
    pid = int((project_dir / "sleeper.pid").read_text())
    assert _alive(pid)
    started = time.monotonic()
    s.agent.abort()
    await bounded(run)
    assert time.monotonic() - started < 5
    (end,) = s.of_type("tool_execution_end")
    assert end["isError"] is True and "aborted" in result_text(end).lower()
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not _alive(pid), "the background sleep of the aborted command survived"
    assert len(s.requests) == 1  # no further request after the abort
    assert s.events[-1] == {"type": "agent_settled", "aborted": True}


async def test_transient_errors_are_retried_with_backoff(scenario: Builder) -> None:
    s = await scenario(retry=RetrySettings(base_delay_ms=40))
    s.server.add(
        error_reply(503, "Service unavailable"),
        error_reply(529, "Overloaded"),
        text_reply("Success"),
    )
    stamps: list[tuple[str, float]] = []
    s.agent.subscribe(
        lambda e: (
            stamps.append((e["type"], time.monotonic()))
            if e["type"] in ("auto_retry_start", "agent_start")
            else None
        )
    )
    await bounded(s.agent.prompt("Test"))
    assert len(s.requests) == 3
    events = retry_events(s)
    assert [(e["type"], e["attempt"]) for e in events] == [
        ("auto_retry_start", 1),
        ("auto_retry_start", 2),
        ("auto_retry_end", 2),
    ]
    assert [e["delayMs"] for e in events[:2]] == [40, 80]
    assert all(e["maxAttempts"] == 3 for e in events[:2])
    assert "503" in events[0]["errorMessage"] and "529" in events[1]["errorMessage"]
    assert events[2] == {"type": "auto_retry_end", "success": True, "attempt": 2}
    # The waits really happened (lower bounds only: never racing the machine).
    kinds = [k for k, _ in stamps]
    assert kinds == [
        "agent_start",
        "auto_retry_start",
        "agent_start",
        "auto_retry_start",
        "agent_start",
    ]
    assert stamps[2][1] - stamps[1][1] >= 0.039 and stamps[4][1] - stamps[3][1] >= 0.079
    assert [e["willRetry"] for e in s.of_type("agent_end")] == [True, True, False]
    # Failed attempts are not sent again; the session keeps them.
    assert [m["role"] for m in s.sent(2)] == ["system", "user"]
    assert [m.get("stopReason") for m in s.agent.messages] == [None, "stop"]
    stored = [
        e["message"].get("stopReason")
        for e in s.agent.session.get_entries()
        if e["type"] == "message"
    ]
    assert stored == [None, "error", "error", "stop"]
    assert s.events[-1] == {"type": "agent_settled", "aborted": False}


async def test_a_dropped_stream_is_retried(scenario: Builder) -> None:
    s = await scenario()
    s.server.add(drop_reply(2, text=["partial ", "never ", "ends"]), text_reply("whole"))
    await bounded(s.agent.prompt("hi"))
    assert [e["type"] for e in retry_events(s)] == ["auto_retry_start", "auto_retry_end"]
    assert text_of(s.agent.messages[-1]) == "whole"


async def test_retries_exhausted_report_failure(scenario: Builder) -> None:
    s = await scenario(retry=RetrySettings(max_retries=2, base_delay_ms=1))
    s.server.add(
        *[error_reply(500, "Internal server error") for _ in range(3)], text_reply("not reached")
    )
    await bounded(s.agent.prompt("Test"))
    assert len(s.requests) == 3
    events = retry_events(s)
    assert [(e["type"], e["attempt"]) for e in events] == [
        ("auto_retry_start", 1),
        ("auto_retry_start", 2),
        ("auto_retry_end", 2),
    ]
    assert events[-1]["success"] is False and "500" in events[-1]["finalError"]
    assert [e["willRetry"] for e in s.of_type("agent_end")] == [True, True, False]
    assert s.agent.messages[-1]["stopReason"] == "error"
    assert s.events[-1] == {"type": "agent_settled", "aborted": False}


async def test_retry_after_longer_than_backoff_wins(scenario: Builder) -> None:
    s = await scenario(retry=RetrySettings(base_delay_ms=5))
    s.server.add(
        error_reply(429, "Too many requests", headers={"retry-after-ms": "150"}), text_reply("ok")
    )
    await bounded(s.agent.prompt("hi"))
    assert retry_events(s)[0]["delayMs"] == 150
    assert text_of(s.agent.messages[-1]) == "ok"


async def test_retry_after_shorter_than_backoff_is_ignored(scenario: Builder) -> None:
    s = await scenario(retry=RetrySettings(base_delay_ms=60))
    s.server.add(
        error_reply(429, "Too many requests", headers={"retry-after": "0"}), text_reply("ok")
    )
    await bounded(s.agent.prompt("hi"))
    assert retry_events(s)[0]["delayMs"] == 60


def test_backoff_formula() -> None:
    settings = RetrySettings(base_delay_ms=2000, max_delay_ms=60000)
    assert [retry_delay_ms(settings, attempt, None) for attempt in (1, 2, 3, 7)] == [
        2000,
        4000,
        8000,
        60000,
    ]
    assert retry_delay_ms(settings, 1, 5000) == 5000 and retry_delay_ms(settings, 2, 3000) == 4000


async def test_abort_during_the_retry_wait_stops_at_once(scenario: Builder) -> None:
    s = await scenario(retry=RetrySettings(base_delay_ms=60_000))
    s.server.add(error_reply(503, "Service unavailable"), text_reply("never"))
    waiting = s.when(lambda e: e["type"] == "auto_retry_start")
    run = asyncio.ensure_future(s.agent.prompt("hi"))
    await bounded(waiting.wait())
    started = time.monotonic()
    s.agent.abort()
    await bounded(run, 5)
    assert time.monotonic() - started < 2
    assert retry_events(s)[-1] == {
        "type": "auto_retry_end",
        "success": False,
        "attempt": 1,
        "finalError": "Retry cancelled",
    }
    assert len(s.requests) == 1
    assert s.events[-1] == {"type": "agent_settled", "aborted": True}


async def test_fatal_401_is_not_retried(scenario: Builder) -> None:
    s = await scenario()
    s.server.add(error_reply(401, "Invalid API key"), text_reply("never"))
    await bounded(s.agent.prompt("hi"))
    assert len(s.requests) == 1 and retry_events(s) == []
    failed = s.agent.messages[-1]
    assert failed["stopReason"] == "error" and failed["errorMessage"].startswith("401")
    assert "Invalid API key" in failed["errorMessage"]
    assert s.of_type("agent_end")[0]["willRetry"] is False
    assert s.types()[-5:] == [
        "message_start:assistant",
        "message_end:assistant",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]


async def test_overflow_errors_are_not_retried_by_the_retry_path(scenario: Builder) -> None:
    # "500" would be retryable; the overflow wording makes it a context overflow instead.
    s = await scenario()
    s.server.add(
        error_reply(500, "This model's maximum context length is 32000 tokens"), text_reply("never")
    )
    await bounded(s.agent.prompt("hi"))
    assert len(s.requests) == 1 and retry_events(s) == []
    assert "maximum context length" in s.agent.messages[-1]["errorMessage"]
    assert (
        s.of_type("agent_end")[0]["willRetry"] is False
    )  # no compaction handler: nothing will happen


async def test_retry_disabled_means_one_attempt(scenario: Builder) -> None:
    s = await scenario(retry=RetrySettings(enabled=False))
    s.server.add(error_reply(503, "Service unavailable"), text_reply("never"))
    await bounded(s.agent.prompt("hi"))
    assert len(s.requests) == 1 and retry_events(s) == []
    assert s.of_type("agent_end")[0]["willRetry"] is False


async def test_prompt_waits_for_the_retry_even_with_slow_message_end_handlers(
    scenario: Builder,
) -> None:
    class Slow:
        @hookimpl
        async def message_end(self, message: Any) -> None:
            if message["role"] == "assistant":
                await asyncio.sleep(0.02)

    s = await scenario(plugins=[Slow()])
    s.server.add(error_reply(529, "overloaded_error"), text_reply("Success"))
    await bounded(s.agent.prompt("Test"))
    assert len(s.requests) == 2 and s.agent.is_streaming is False
    assert [(e["type"], e.get("success")) for e in retry_events(s)] == [
        ("auto_retry_start", None),
        ("auto_retry_end", True),
    ]
    assert text_of(s.agent.messages[-1]) == "Success"
    assert s.events[-1] == {"type": "agent_settled", "aborted": False}
