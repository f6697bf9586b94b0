"""Overflow and early ``length`` recovery: the omission, the compaction and one fresh retry, in
the documented order; no loop on a second failure; failures and cancellations keep the
omission and schedule nothing; a recovered input over budget is summarized (retain-none)."""

from __future__ import annotations

import asyncio
from typing import Any

from knightcode import CompactionVerdict
from knightcode.testing import error_reply, reply, text_reply, usage
from tests.harness import Builder, Run, bounded, summary_reply

from .observer import Observer

OVERFLOW = "prompt is too long: 12000 tokens > 10000 maximum"
SETTINGS: dict[str, Any] = {"compaction": {"reserveTokens": 2000, "keepRecentTokens": 50}}


async def history(run: Run) -> None:
    """Two exchanges; the second prompt (103 tokens) is where a 50-token budget runs out."""
    run.server.add(text_reply("answer one", usage=usage(input=100)))
    await bounded(run.agent.prompt("question one"))
    run.server.add(text_reply("answer two", usage=usage(input=200)))
    await bounded(run.agent.prompt("question two " + "b" * 400))


def user_texts(run: Run, index: int) -> list[str]:
    out = []
    for message in run.requests[index].body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            out.append(
                content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
            )
    return out


async def test_overflow_is_recovered_with_one_retry_in_the_documented_order(build: Builder) -> None:
    observer = Observer()
    run = await build(settings=SETTINGS, plugins=(observer,))
    await history(run)
    first_event = len(run.events)
    run.server.add(
        error_reply(400, OVERFLOW), summary_reply(), text_reply("fits now", usage=usage(input=300))
    )
    await bounded(run.agent.prompt("question three"))

    kinds = [
        e["type"]
        for e in run.events[first_event:]
        if e["type"]
        in (
            "agent_start",
            "turn_end",
            "agent_end",
            "compaction_start",
            "compaction_end",
            "agent_settled",
        )
    ]
    assert kinds == [
        "agent_start",
        "turn_end",
        "agent_end",
        "compaction_start",
        "compaction_end",
        "agent_start",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    ends = run.of_type("agent_end")[-2:]
    assert [e["willRetry"] for e in ends] == [True, False]
    start, end = run.of_type("compaction_start", "compaction_end")
    assert start == {"type": "compaction_start", "reason": "overflow"}
    assert end["reason"] == "overflow" and end["willRetry"] is True and end["aborted"] is False
    (before,) = observer.calls("session_before_compact")
    assert before["reason"] == "overflow" and before["will_retry"] is True
    # Persisted: the failed attempt, its omission, the compaction, then the retried answer.
    tail = [(e["type"], e.get("message", {}).get("stopReason")) for e in run.entries()[-5:]]
    assert tail == [
        ("message", None),
        ("message", "error"),
        ("context_edit", None),
        ("compaction", None),
        ("message", "stop"),
    ]
    failed, edit = run.entries()[-4], run.entries()[-3]
    assert (
        edit["edits"] == [{"op": "omit", "targetId": failed["id"]}]
        and edit["reason"] == "overflow_recovery"
    )
    # The retry is a fresh request from the compacted context, without the failed attempt.
    assert len(run.requests) == 5 and run.is_summary_request(3)
    assert user_texts(run, 4)[1:] == ["question two " + "b" * 400, "question three"]
    assert "answer one" in run.prompt_text(3) and "question three" not in run.prompt_text(3)
    assert [m["role"] for m in run.agent.messages] == [
        "compactionSummary",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert observer.calls("agent_before_settle")[-1]["roles"] == [
        m["role"] for m in run.agent.messages
    ]


async def test_early_length_stop_is_recovered_like_an_overflow(build: Builder) -> None:
    run = await build(settings=SETTINGS)
    await history(run)
    run.server.add(
        reply(text="cut off mid-sen", finish="length"), summary_reply(), text_reply("complete")
    )
    await bounded(run.agent.prompt("question three"))
    edit = run.entries("context_edit")[0]
    assert edit["reason"] == "length_recovery"
    truncated: Any = run.agent.session.get_entry(edit["edits"][0]["targetId"])
    assert truncated is not None and truncated["message"]["stopReason"] == "length"
    assert run.of_type("compaction_end")[0]["reason"] == "overflow"
    assert run.of_type("compaction_end")[0]["willRetry"] is True
    assert "cut off" not in str(run.requests[-1].body["messages"])
    assert run.agent.messages[-1]["content"][0]["text"] == "complete"


async def test_a_second_overflow_in_the_same_prompt_does_not_loop(build: Builder) -> None:
    run = await build(settings=SETTINGS)
    await history(run)
    run.server.add(error_reply(400, OVERFLOW), summary_reply(), error_reply(400, OVERFLOW))
    await bounded(run.agent.prompt("question three"))
    assert len(run.requests) == 5  # the prompt, the summary, one retry
    assert len(run.of_type("compaction_start")) == 1
    assert run.of_type("compaction_end")[-1] == {
        "type": "compaction_end",
        "reason": "overflow",
        "aborted": False,
        "willRetry": False,
        "errorMessage": "Context overflow recovery failed after one compact-and-retry attempt. "
        "Try reducing context or switching to a larger-context model.",
    }
    assert run.kinds()[-1] == "agent_settled"
    # The next prompt may recover again.
    run.server.add(error_reply(400, OVERFLOW), summary_reply(), text_reply("recovered"))
    await bounded(run.agent.prompt("again"))
    assert run.agent.messages[-1]["content"][0]["text"] == "recovered"


async def test_a_second_length_stop_reports_the_truncation(build: Builder) -> None:
    run = await build(settings=SETTINGS)
    await history(run)
    run.server.add(
        reply(text="cut", finish="length"),
        summary_reply(),
        reply(text="cut again", finish="length"),
    )
    await bounded(run.agent.prompt("question three"))
    assert run.of_type("compaction_end")[-1]["errorMessage"] == (
        "Truncated response recovery failed after one compact-and-retry attempt."
    )


async def test_a_failed_recovery_keeps_the_omission_and_does_not_retry(build: Builder) -> None:
    observer = Observer(
        lambda prep: {"compaction": {"summary": "bad", "first_kept_entry_id": "nope"}}
    )
    run = await build(settings=SETTINGS, plugins=(observer,))
    await history(run)
    run.server.add(error_reply(400, OVERFLOW), text_reply("never requested"))
    await bounded(run.agent.prompt("question three"))

    assert len(run.requests) == 3 and run.server.pending == 1
    (end,) = run.of_type("compaction_end")
    assert end["errorMessage"].startswith(
        "Context overflow recovery failed: the compaction a plugin supplied"
    )
    assert end["willRetry"] is False and end["aborted"] is False and "result" not in end
    assert observer.calls("session_compact_failed") == [
        {
            "reason": "overflow",
            "error_message": end["errorMessage"],
            "aborted": False,
            "will_retry": True,
            "from_extension": True,
        }
    ]
    assert run.entries("compaction") == [] and len(run.entries("context_edit")) == 1
    # The projection no longer holds the failed attempt, and agent_before_settle sees that.
    assert [m.get("stopReason") for m in run.agent.messages if m["role"] == "assistant"] == [
        "stop",
        "stop",
    ]
    assert observer.calls("agent_before_settle")[-1]["roles"] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]


async def test_a_cancelled_recovery_keeps_the_omission_and_does_not_retry(build: Builder) -> None:
    observer = Observer(lambda prep: {"cancel": True})
    run = await build(settings=SETTINGS, plugins=(observer,))
    await history(run)
    run.server.add(error_reply(400, OVERFLOW))
    await bounded(run.agent.prompt("question three"))
    assert run.of_type("compaction_end") == [
        {"type": "compaction_end", "reason": "overflow", "aborted": True, "willRetry": False}
    ]
    assert observer.calls("session_compact_failed")[0] == {
        "reason": "overflow",
        "error_message": None,
        "aborted": True,
        "will_retry": True,
        "from_extension": False,
    }
    assert len(run.requests) == 3 and run.entries("compaction") == []
    assert run.entries("context_edit")[0]["reason"] == "overflow_recovery"


async def test_an_over_budget_input_is_summarized_and_nothing_visible_is_kept(
    build: Builder,
) -> None:
    run = await build(settings=SETTINGS)
    await history(run)
    huge = "please handle this: " + "h" * 2000  # 505 tokens, alone over the 50-token budget
    run.server.add(
        error_reply(400, OVERFLOW), summary_reply("## Goal\nhandle h"), text_reply("handled")
    )
    await bounded(run.agent.prompt(huge))

    assert huge in run.prompt_text(3)  # the input itself is summarized
    (compaction,) = run.entries("compaction")
    # Retain-none: the entry keeps nothing, recorded as its own id.
    assert compaction["firstKeptEntryId"] == compaction["id"]
    assert [m["role"] for m in run.requests[4].body["messages"]] == ["system", "user"]
    assert "handle h" in user_texts(run, 4)[0]
    # A later compaction continues after that one: the input is not summarized twice, and
    # the answer after it (all within the budget) is kept.
    run.server.add(summary_reply("## Goal\nthird"))
    await bounded(run.agent.compact())
    assert run.prompt_text(5).startswith(
        "<conversation>\n\n</conversation>\n\n<previous-summary>\n## Goal\nhandle h"
    )
    handled = run.entries("message")[-1]
    assert run.entries("compaction")[-1]["firstKeptEntryId"] == handled["id"]


async def test_an_abort_during_the_summary_aborts_the_compaction(build: Builder) -> None:
    observer = Observer()
    run = await build(settings=SETTINGS, plugins=(observer,))
    await history(run)
    run.server.add(text_reply("## Goal", " slow", delay=0.5))
    task = asyncio.ensure_future(run.agent.compact())
    await asyncio.to_thread(run.server.wait_for_requests, 3)  # the summary request is in flight
    run.agent.abort()
    verdict = await bounded(task)
    assert verdict == CompactionVerdict(compacted=False, retry=False, aborted=True)
    assert run.of_type("compaction_end")[-1] == {
        "type": "compaction_end",
        "reason": "manual",
        "aborted": True,
        "willRetry": False,
    }
    assert observer.calls("session_compact_failed")[0]["aborted"] is True
    assert run.entries("compaction") == []


async def test_a_silent_overflow_compacts_without_dropping_or_retrying_the_answer(
    build: Builder,
) -> None:
    run = await build(settings=SETTINGS)
    await history(run)
    run.server.add(text_reply("a fine answer", usage=usage(input=10001, output=2)), summary_reply())
    await bounded(run.agent.prompt("question three"))
    (end,) = run.of_type("compaction_end")
    assert end["reason"] == "overflow" and end["willRetry"] is False and "result" in end
    assert run.entries("context_edit") == [] and len(run.requests) == 4  # no retry request
    assert run.agent.messages[-1]["content"][0]["text"] == "a fine answer"


async def test_a_length_stop_at_the_output_limit_is_not_recovered(build: Builder) -> None:
    run = await build(settings=SETTINGS)
    await history(run)
    run.server.add(
        reply(text="a very long answer", finish="length", usage=usage(input=300, output=2048))
    )
    await bounded(run.agent.prompt("write a novel"))
    assert run.of_type("compaction_start") == [] and run.entries("context_edit") == []
    assert len(run.requests) == 3 and run.agent.messages[-1]["stopReason"] == "length"
