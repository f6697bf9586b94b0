"""Summary requests that always fit and never leave a session stuck: the output budget, no
prompt-cache writes, reasoning, chunking, a provider overflow halving the pieces, retries with
their events, the size cap, the deterministic fallback, the circuit breaker, and file lists
accumulated across two compactions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from knightcode import estimate_text_tokens, generate_summary, generate_summary_with_usage
from knightcode._llm.summary import SUMMARIZATION_SYSTEM_PROMPT, estimate_request_tokens
from knightcode.testing import error_reply, text_reply, tool_call, tool_call_reply, usage
from knightcode_builtins.compaction.prompts import SPLIT_TURN_SEPARATOR
from tests.harness import (
    ANTHROPIC,
    PROVIDER,
    REASONING,
    SMALL,
    TINY,
    Builder,
    Run,
    bounded,
    summary_reply,
)

SETTINGS: dict[str, Any] = {
    "compaction": {"reserveTokens": 2000, "keepRecentTokens": 100}
}  # threshold 8000
OVERFLOW = "prompt is too long: 12000 tokens > 10000 maximum"


async def tick() -> None:
    """Let the millisecond clock move on: a message stamped in the same millisecond as the
    compaction before it counts as stale (the reference's rule), which these tests must avoid."""
    await asyncio.sleep(0.003)


async def two_exchanges(run: Run, *then: Any, first: str = "question one") -> None:
    """A first exchange, then a second whose 154-token prompt is kept and whose usage crosses
    the threshold, so an automatic compaction summarizes the first exchange (answered by the
    replies ``then``)."""
    run.server.add(text_reply("answer one", usage=usage(input=100)))
    await bounded(run.agent.prompt(first))
    run.server.add(text_reply("answer two", usage=usage(input=8500)), *then)
    await bounded(run.agent.prompt("question two " + "q" * 600))


async def compact_after_tool_calls(run: Run, calls: list[Any], summary: str) -> None:
    """A prompt answered with ``calls``, a second prompt, then ``/compact`` summarized as
    ``summary``."""
    run.server.add(
        tool_call_reply(calls),
        text_reply("done", usage=usage(input=100)),
        text_reply("noted", usage=usage(input=100)),
        summary_reply(summary),
    )
    await bounded(run.agent.prompt("use the tools"))
    await bounded(run.agent.prompt("next " + "n" * 600))
    await bounded(run.agent.compact())


async def test_output_budget_is_the_summary_cap_reduced_to_fit_the_window(build: Builder) -> None:
    run = await build(settings=SETTINGS)
    await two_exchanges(run, summary_reply(), first="a" * 31000)  # a 7750-token first prompt
    body = run.requests[2].body
    prompt = body["messages"][-1]["content"][0]["text"]
    expected = 10000 - estimate_request_tokens(SUMMARIZATION_SYSTEM_PROMPT, prompt)
    assert 1024 <= expected < 1250 and body["max_tokens"] == expected
    # A request with room to spare asks for the summary cap (a window of 10000: 1250), not the
    # model's output limit (2048): the summary could not be kept longer anyway.
    run.server.add(text_reply("x", usage=usage(input=100)), summary_reply())
    await bounded(run.agent.prompt("question three " + "t" * 600))
    await bounded(run.agent.compact())
    assert run.requests[-1].body["max_tokens"] == 1250


async def test_summary_requests_write_no_prompt_cache(build: Builder) -> None:
    run = await build(settings=SETTINGS, provider=ANTHROPIC)
    await two_exchanges(run, summary_reply())
    ordinary, summary = run.requests[1].body, run.requests[2].body
    assert run.requests[2].path.endswith("/messages") and "<conversation>" in json.dumps(summary)
    assert "cache_control" in json.dumps(ordinary)
    assert "cache_control" not in json.dumps(summary)


async def test_generate_summary_reasons_only_on_reasoning_models(build: Builder) -> None:
    """The reference's compaction-summary-reasoning test, against the scripted server."""
    run = await build()
    models = run.agent.model_registry
    messages = [{"role": "user", "content": "Summarize this.", "timestamp": 0}]
    thinker, plain = models.find_known(PROVIDER, REASONING), models.find_known(PROVIDER, SMALL)
    assert thinker is not None and plain is not None
    run.server.add(summary_reply(), summary_reply(), summary_reply())
    result = await generate_summary_with_usage(messages, thinker, models)  # type: ignore[arg-type]
    assert result.text == "## Goal\nShip it.\n\n## Progress\n### Done\n- [x] read the code"
    assert result.usage["input"] == 500 and result.usage["output"] == 50
    assert run.requests[0].body["reasoning_effort"] == "high"
    assert await generate_summary(messages, plain, models) == result.text  # type: ignore[arg-type]
    assert "reasoning_effort" not in run.requests[1].body
    await generate_summary(messages, thinker, models, thinking_level="off")  # type: ignore[arg-type]
    assert "reasoning_effort" not in run.requests[2].body


async def test_compaction_thinks_at_the_session_level(build: Builder) -> None:
    run = await build(settings=SETTINGS, model=REASONING, thinking_level="medium")
    await two_exchanges(run, summary_reply())
    assert run.is_summary_request(2) and run.requests[2].body["reasoning_effort"] == "medium"


async def test_a_conversation_too_big_for_the_window_is_summarized_in_pieces(
    build: Builder,
) -> None:
    run = await build(
        settings={"compaction": {"reserveTokens": 500, "keepRecentTokens": 100}}, model=TINY
    )
    for index in range(6):  # six 300-token prompts: 1800 tokens of history for a 3000-token window
        run.server.add(text_reply(f"ok {index}", usage=usage(input=100)))
        await bounded(run.agent.prompt(f"m{index} " + "x" * 1200))
    run.server.add(text_reply("final answer", usage=usage(input=2600)))
    run.server.add(*[summary_reply(f"## Goal\npiece {i}") for i in range(3)])
    await bounded(run.agent.prompt("final " + "f" * 600))

    # The whole request would leave ~550 tokens of output room; pieces get ~630 tokens of
    # conversation (the window less 1024 of output, the instructions and a capped running
    # summary), so two exchanges per piece.
    summaries = [i for i in range(len(run.requests)) if run.is_summary_request(i)]
    assert len(summaries) == 3 and run.server.pending == 0
    for piece, index in enumerate(summaries):
        body = run.requests[index].body
        prompt = body["messages"][-1]["content"][0]["text"]
        assert (
            estimate_request_tokens(SUMMARIZATION_SYSTEM_PROMPT, prompt) + body["max_tokens"]
            <= 3000
        )
        assert f"[User]: m{2 * piece} " in prompt and f"[User]: m{2 * piece + 1} " in prompt
        assert f"m{2 * piece + 2} " not in prompt
        if piece:  # each piece is folded into the summary of the pieces before it
            assert f"<previous-summary>\n## Goal\npiece {piece - 1}\n</previous-summary>" in prompt
    assert run.of_type("compaction_end")[0]["result"]["summary"] == "## Goal\npiece 2"


async def test_a_single_message_too_big_for_a_piece_is_shortened(build: Builder) -> None:
    run = await build(
        settings={"compaction": {"reserveTokens": 500, "keepRecentTokens": 100}}, model=TINY
    )
    run.server.add(text_reply("ok", usage=usage(input=100)))
    await bounded(run.agent.prompt("start " + "s" * 6000 + " end"))  # 1500 tokens
    run.server.add(text_reply("answer", usage=usage(input=2600)), summary_reply(), summary_reply())
    await bounded(run.agent.prompt("next " + "n" * 600))
    prompt = run.prompt_text(2)
    assert "[User]: start sss" in prompt and prompt.count("s") < 4000
    assert "characters left out to fit the summarizer's context window ...]" in prompt
    assert "sss end" in prompt  # the end of the message survives too


async def test_a_provider_overflow_halves_the_pieces(build: Builder) -> None:
    run = await build(settings=SETTINGS)
    run.server.add(text_reply("answer one", usage=usage(input=100)))
    await bounded(run.agent.prompt("first " + "1" * 8000))  # 2000 tokens
    run.server.add(text_reply("answer two", usage=usage(input=100)))
    await bounded(run.agent.prompt("second " + "2" * 8000))
    run.server.add(
        text_reply("answer three", usage=usage(input=8500)),
        error_reply(400, OVERFLOW),
        summary_reply("## Goal\nhalf one"),
        summary_reply("## Goal\nhalf two"),
    )
    await bounded(run.agent.prompt("third " + "3" * 600))

    assert [run.is_summary_request(i) for i in range(3, 6)] == [True, True, True]
    assert "first 1" in run.prompt_text(3) and "second 2" in run.prompt_text(3)  # all at once
    assert "first 1" in run.prompt_text(4) and "second 2" not in run.prompt_text(4)
    assert "second 2" in run.prompt_text(5) and "## Goal\nhalf one" in run.prompt_text(5)
    assert run.of_type("compaction_end")[0]["result"]["summary"] == "## Goal\nhalf two"
    assert run.of_type("summarization_retry_scheduled") == []  # an overflow is not retried as is


async def test_transient_failures_are_retried_with_events(build: Builder) -> None:
    run = await build(settings=SETTINGS)
    await two_exchanges(run, error_reply(503, "overloaded"), summary_reply())
    kinds = run.kinds(
        "compaction_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
        "compaction_end",
    )
    assert kinds == [
        "compaction_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
        "compaction_end",
    ]
    scheduled, started, finished = run.of_type(
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
    )
    assert scheduled["attempt"] == 1 and scheduled["maxAttempts"] == 3 and scheduled["delayMs"] == 1
    assert "503" in scheduled["errorMessage"]
    assert started == {
        "type": "summarization_retry_attempt_start",
        "source": "compaction",
        "reason": "threshold",
    }
    assert finished == {"type": "summarization_retry_finished"}
    result = run.of_type("compaction_end")[0]["result"]
    assert result["usage"]["totalTokens"] == 550 and "fallback" not in result["details"]


async def test_exhausted_retries_fall_back_to_the_deterministic_summary(
    build: Builder, capsys: pytest.CaptureFixture[str]
) -> None:
    run = await build(settings=SETTINGS)
    await two_exchanges(
        run, *[error_reply(503, "overloaded")] * 4, first="Make the parser handle tabs"
    )
    assert len(run.of_type("summarization_retry_scheduled")) == 3
    assert len(run.of_type("summarization_retry_attempt_start")) == 3
    assert len(run.of_type("summarization_retry_finished")) == 1
    end = run.of_type("compaction_end")[0]
    details = end["result"]["details"]
    assert details["fallback"] == "deterministic" and "503" in details["fallbackReason"]
    summary = end["result"]["summary"]
    assert summary.startswith(
        "## Goal\nMake the parser handle tabs\n\n## Constraints & Preferences"
    )
    assert "- Latest user request, verbatim:\n\nMake the parser handle tabs" in summary
    assert "usage" not in end["result"]
    assert (
        "warning: compaction: the summary was assembled without a model" in capsys.readouterr().err
    )


async def test_a_failing_summarizer_cannot_leave_an_overflowed_session_stuck(
    build: Builder,
) -> None:
    run = await build(settings=SETTINGS)
    run.server.add(text_reply("answer one", usage=usage(input=100)))
    await bounded(run.agent.prompt("question one"))
    run.server.add(
        error_reply(400, OVERFLOW), error_reply(401, "invalid x-api-key"), text_reply("made it")
    )
    await bounded(run.agent.prompt("question two " + "q" * 600))
    end = run.of_type("compaction_end")[0]
    assert end["result"]["details"]["fallback"] == "deterministic" and end["willRetry"] is True
    assert run.agent.messages[-1]["content"][0]["text"] == "made it"


async def test_a_manual_compaction_reports_a_summarizer_failure_instead(build: Builder) -> None:
    run = await build(settings=SETTINGS)
    run.server.add(
        text_reply("answer", usage=usage(input=100)), error_reply(401, "invalid x-api-key")
    )
    await bounded(run.agent.prompt("question"))
    verdict = await bounded(run.agent.compact())
    assert verdict.compacted is False and run.entries("compaction") == []


async def test_summaries_are_capped(build: Builder) -> None:
    run = await build(settings=SETTINGS)
    await two_exchanges(run, summary_reply("## Goal\n" + "word " * 4000))  # 20 000 characters
    summary = run.entries("compaction")[0]["summary"]
    assert summary.endswith("[Summary shortened to about 1250 tokens.]") and len(summary) < 5100


async def test_the_breaker_stops_automatic_compaction_after_three_low_yield_ones(
    build: Builder, capsys: pytest.CaptureFixture[str]
) -> None:
    # Threshold 4000; every prompt alone is 4200 tokens and is kept: compaction frees nothing.
    run = await build(settings={"compaction": {"reserveTokens": 6000, "keepRecentTokens": 100}})
    for index in range(4):
        await tick()
        run.server.add(text_reply("ok", usage=usage(input=4300)))
        if index < 3:
            run.server.add(summary_reply())
        await bounded(run.agent.prompt(f"p{index} " + "z" * 16800))
    assert len(run.of_type("compaction_start")) == 3
    assert run.server.pending == 0
    err = capsys.readouterr().err
    assert "Automatic compaction is paused: the last 3 compactions freed too little context" in err
    # A manual compaction closes the breaker again.
    run.server.add(summary_reply(), text_reply("ok", usage=usage(input=4300)), summary_reply())
    await bounded(run.agent.compact())
    await tick()
    await bounded(run.agent.prompt("p4 " + "z" * 16800))
    assert len(run.of_type("compaction_start")) == 5


async def test_file_lists_accumulate_across_two_compactions(
    build: Builder, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("alpha\n")
    run = await build(settings=SETTINGS)
    calls = [
        tool_call("c1", "read", {"path": "a.txt"}),
        tool_call("c2", "write", {"path": "b.txt", "content": "beta\n"}),
    ]
    await compact_after_tool_calls(run, calls, "## Goal\nfirst")
    first = run.entries("compaction")[0]
    assert first["details"] == {"readFiles": ["a.txt"], "modifiedFiles": ["b.txt"]}
    assert first["summary"] == (
        "## Goal\nfirst\n\n<read-files>\na.txt\n</read-files>\n\n"
        "<modified-files>\nb.txt\n</modified-files>"
    )

    run.server.add(
        tool_call_reply(
            [
                tool_call(
                    "c3",
                    "edit",
                    {"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "gamma"}]},
                )
            ]
        ),
        text_reply("edited", usage=usage(input=100)),
        text_reply("fine", usage=usage(input=100)),
        summary_reply("## Goal\nsecond"),
    )
    await bounded(run.agent.prompt("edit a"))
    await bounded(run.agent.prompt("last " + "l" * 600))
    await bounded(run.agent.compact())
    second = run.entries("compaction")[1]
    assert second["details"] == {"readFiles": [], "modifiedFiles": ["a.txt", "b.txt"]}
    assert second["summary"].endswith("<modified-files>\na.txt\nb.txt\n</modified-files>")
    assert "<read-files>" not in second["summary"]


async def test_a_split_span_summary_is_capped_as_a_whole(build: Builder, project_dir: Path) -> None:
    """The two summaries of a split user-message span share the cap (before: each was capped on
    its own and the merged summary stored at twice the cap), and no request asks for more output
    than its share."""
    (project_dir / "notes.txt").write_text("alpha\n" * 20)  # a 30-token tool result
    run = await build(settings={"compaction": {"reserveTokens": 2000, "keepRecentTokens": 35}})
    run.server.add(text_reply("earlier answer", usage=usage(input=200)))
    await bounded(run.agent.prompt("earlier question"))
    huge = "## Goal\n" + "word " * 4000  # 20 000 characters: 5000 tokens each
    run.server.add(
        tool_call_reply([tool_call("c1", "read", {"path": "notes.txt"})], usage=usage(input=7990)),
        summary_reply(huge),
        summary_reply(huge),
        text_reply("done", usage=usage(input=600)),
    )
    await bounded(run.agent.prompt("fix it " + "y" * 400))
    (entry,) = run.entries("compaction")
    summary = entry["summary"]
    history, prefix = summary.split(SPLIT_TURN_SEPARATOR)
    assert history.startswith("## Goal\nword") and prefix.startswith("## Goal\nword")
    assert 1100 < estimate_text_tokens(summary) <= 1250  # a window of 10 000: the cap is 1250
    limits = [r.body["max_tokens"] for i, r in enumerate(run.requests) if run.is_summary_request(i)]
    assert len(limits) == 2 and sum(limits) <= 1250 and all(limit > 300 for limit in limits)


async def test_long_file_lists_stay_within_the_cap(build: Builder, project_dir: Path) -> None:
    names = [f"src/module_{index:03d}/implementation_file_{index:03d}.py" for index in range(200)]
    calls = [
        tool_call(f"c{i}", "write", {"path": name, "content": "x\n"})
        for i, name in enumerate(names)
    ]
    run = await build(settings=SETTINGS)
    await compact_after_tool_calls(run, calls, "## Goal\nmany files")
    (entry,) = run.entries("compaction")
    summary = entry["summary"]
    assert estimate_text_tokens(summary) <= 1250
    assert summary.startswith("## Goal\nmany files\n\n<modified-files>\nsrc/module_000/")
    shown = summary.count("implementation_file_")
    assert 10 < shown < 200 and f"[{200 - shown} more]" in summary
    assert entry["details"]["modifiedFiles"] == sorted(names)  # the details keep every path
