"""Automatic and manual compaction through real sessions against the scripted server: the
threshold after a run, between turns (a split span), before a prompt, ``/compact`` with
instructions, a plugin cancelling or supplying the compaction, per-model overrides, and the
exact ``compaction_start``/``compaction_end`` events."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from knightcode import CompactionVerdict
from knightcode._llm.summary import COMPACTION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, UPDATE_PROMPT
from knightcode._session import estimate_tokens
from knightcode.testing import error_reply, text_reply, tool_call, tool_call_reply, usage
from knightcode_builtins.compaction.prompts import SPLIT_TURN_SEPARATOR, TURN_PREFIX_PROMPT
from tests.harness import (
    LARGE,
    PROVIDER,
    SMALL,
    SUMMARY,
    Builder,
    Run,
    bounded,
    summary_reply,
)

from .observer import Observer

SETTINGS: dict[str, Any] = {
    "compaction": {"reserveTokens": 2000, "keepRecentTokens": 100}
}  # threshold 8000


def sent(run: Run, index: int) -> list[tuple[str, str]]:
    """(role, text) of every message of request ``index``."""
    out = []
    for message in run.requests[index].body["messages"]:
        content = message.get("content")
        text = (
            content
            if isinstance(content, str)
            else "".join(p.get("text", "") for p in content or [])
        )
        out.append((message["role"], text))
    return out


def entry_of(run: Run, role: str, text: str) -> dict[str, Any]:
    for entry in run.entries("message"):
        message = entry["message"]
        content = message["content"]
        body = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        if message["role"] == role and body.startswith(text):
            return dict(entry)
    raise AssertionError(f"no {role} message {text!r}")


async def test_threshold_after_a_run_compacts_with_exact_events(build: Builder) -> None:
    observer = Observer()
    run = await build(settings=SETTINGS, plugins=(observer,))
    run.server.add(text_reply("first answer", usage=usage(input=300, output=5)))
    await bounded(run.agent.prompt("first question"))
    assert run.of_type("compaction_start") == []  # 305 tokens: far below the threshold
    second = "second question " + "q" * 600  # 154 tokens: the budget (100) runs out here
    run.server.add(text_reply("second answer", usage=usage(input=8500, output=10)), summary_reply())
    await bounded(run.agent.prompt(second))

    assert run.kinds()[-5:] == [
        "turn_end",
        "agent_end",
        "compaction_start",
        "compaction_end",
        "agent_settled",
    ]
    kept = entry_of(run, "user", "second question")
    context = run.agent.session.build_context().messages
    after = sum(estimate_tokens(m) for m in context)
    assert after == math.ceil(len(SUMMARY) / 4) + 154 + 4
    assert run.of_type("compaction_start", "compaction_end") == [
        {"type": "compaction_start", "reason": "threshold"},
        {
            "type": "compaction_end",
            "reason": "threshold",
            "result": {
                "summary": SUMMARY,
                "firstKeptEntryId": kept["id"],
                "tokensBefore": 8510,
                "estimatedTokensAfter": after,
                "usage": {
                    "input": 500,
                    "output": 50,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 550,
                    "cost": {
                        "input": 0.0,
                        "output": 0.0,
                        "cacheRead": 0.0,
                        "cacheWrite": 0.0,
                        "total": 0.0,
                    },
                },
                "details": {"readFiles": [], "modifiedFiles": []},
            },
            "aborted": False,
            "willRetry": False,
        },
    ]
    # The summary request: our system prompt, the serialized history, the checkpoint prompt.
    assert sent(run, 2) == [
        ("system", SUMMARIZATION_SYSTEM_PROMPT),
        (
            "user",
            "<conversation>\n[User]: first question\n\n"
            "[Assistant]: first answer\n</conversation>\n\n"
            + COMPACTION_PROMPT
            + "\n\nKeep the whole summary under 1250 tokens.",
        ),
    ]
    # The entry, in memory and on disk; the agent's messages restart from the summary.
    compaction = run.file_lines()[-1]
    assert compaction["type"] == "compaction" and compaction["firstKeptEntryId"] == kept["id"]
    assert compaction["tokensBefore"] == 8510 and compaction["usage"]["totalTokens"] == 550
    assert "fromHook" not in compaction
    assert [m["role"] for m in run.agent.messages] == ["compactionSummary", "user", "assistant"]
    # The hooks: the preparation carries every documented field.
    (before,) = observer.calls("session_before_compact")
    prep = before["preparation"]
    assert (before["reason"], before["will_retry"], before["custom_instructions"]) == (
        "threshold",
        False,
        None,
    )
    assert [m["role"] for m in prep.messages_to_summarize] == ["user", "assistant"]
    assert (
        prep.turn_prefix_messages == []
        and prep.is_split_turn is False
        and prep.previous_summary is None
    )
    assert prep.tokens_before == 8510 and prep.first_kept_entry_id == kept["id"]
    assert (
        prep.settings.reserve_tokens,
        prep.settings.keep_recent_tokens,
        prep.settings.enabled,
    ) == (2000, 100, True)
    assert (
        prep.file_ops.read == set()
        and before["branch_entries"][-1]["message"]["role"] == "assistant"
    )
    (done,) = observer.calls("session_compact")
    assert done["from_extension"] is False and done["entry"]["id"] == compaction["id"]
    assert run.failures == []


async def test_threshold_between_turns_compacts_before_the_next_request(
    build: Builder, project_dir: Path
) -> None:
    (project_dir / "notes.txt").write_text("alpha\n" * 20)  # a 30-token tool result
    # keepRecentTokens 35: the tool result (30) and its call (6) exhaust it, so the cut splits
    # the user-message span at the call.
    run = await build(settings={"compaction": {"reserveTokens": 2000, "keepRecentTokens": 35}})
    run.server.add(text_reply("earlier answer", usage=usage(input=200)))
    await bounded(run.agent.prompt("earlier question"))
    run.server.add(
        tool_call_reply([tool_call("c1", "read", {"path": "notes.txt"})], usage=usage(input=7990)),
        summary_reply("## Goal\nearlier history"),
        summary_reply("## Original Request\nfix it"),
        text_reply("done", usage=usage(input=600)),
    )
    await bounded(run.agent.prompt("fix it " + "y" * 400))

    kinds = run.kinds("turn_start", "turn_end", "compaction_start", "compaction_end", "agent_end")
    assert kinds[-7:] == [
        "turn_start",
        "turn_end",
        "compaction_start",
        "compaction_end",
        "turn_start",
        "turn_end",
        "agent_end",
    ]
    # Two summary requests: the history before the span, then the span's prefix.
    assert run.is_summary_request(2) and run.is_summary_request(3)
    assert "[User]: earlier question" in run.prompt_text(2) and "fix it" not in run.prompt_text(2)
    assert run.prompt_text(3).startswith("<conversation>\n[User]: fix it y")
    assert TURN_PREFIX_PROMPT in run.prompt_text(3)
    (end,) = run.of_type("compaction_end")
    assert (
        end["result"]["summary"]
        == "## Goal\nearlier history" + SPLIT_TURN_SEPARATOR + "## Original Request\nfix it"
    )
    call = next(e for e in run.entries("message") if e["message"].get("stopReason") == "toolUse")
    assert end["result"]["firstKeptEntryId"] == call["id"] and end["result"]["tokensBefore"] == 8020
    # The next turn's request starts from the summary and keeps the call and its result.
    roles = [role for role, _ in sent(run, 4)]
    assert roles == ["system", "user", "assistant", "tool"]
    assert "earlier history" in sent(run, 4)[1][1]
    assert run.of_type("agent_end")[-1]["willRetry"] is False
    assert (
        len(run.of_type("compaction_start")) == 1
    )  # "done" came after the compaction: no second one


async def test_threshold_before_a_prompt_after_switching_to_a_smaller_model(build: Builder) -> None:
    run = await build(settings=SETTINGS, model=LARGE)
    run.server.add(text_reply("big answer", usage=usage(input=8500, output=10)))
    await bounded(run.agent.prompt("question one " + "q" * 600))
    assert run.of_type("compaction_start") == []  # 8510 of 100 000
    small = run.agent.model_registry.find_known(PROVIDER, SMALL)
    assert small is not None
    await run.agent.set_model(small)
    run.server.add(summary_reply(), text_reply("answer two", usage=usage(input=900)))
    await bounded(run.agent.prompt("question two"))

    kinds = run.kinds("agent_start", "compaction_start", "compaction_end", "agent_settled")
    assert kinds == [
        "agent_start",
        "agent_settled",
        "compaction_start",
        "compaction_end",
        "agent_start",
        "agent_settled",
    ]
    assert run.requests[1].body["model"] == SMALL and run.is_summary_request(1)
    assert [role for role, _ in sent(run, 2)] == ["system", "user", "user", "assistant", "user"]
    assert sent(run, 2)[-1] == ("user", "question two")


async def test_manual_compaction_with_instructions_and_already_compacted(build: Builder) -> None:
    observer = Observer()
    run = await build(settings=SETTINGS, plugins=(observer,))
    run.server.add(text_reply("answer", usage=usage(input=100)))
    await bounded(run.agent.prompt("question " + "q" * 600))
    run.server.add(summary_reply())
    verdict = await bounded(run.agent.compact("focus on the parser"))

    assert verdict.compacted is True and verdict.retry is False
    assert run.prompt_text(1).endswith("\n\nAdditional focus: focus on the parser")
    assert (
        observer.calls("session_before_compact")[0]["custom_instructions"] == "focus on the parser"
    )
    start, end = run.of_type("compaction_start", "compaction_end")
    assert start == {"type": "compaction_start", "reason": "manual"}
    assert (
        end["reason"] == "manual" and end["result"] == verdict.result and end["willRetry"] is False
    )
    assert run.kinds()[-1] == "agent_settled"

    again = await bounded(run.agent.compact())
    assert again == CompactionVerdict(
        compacted=False,
        retry=False,
        error_message="Compaction failed: Already compacted",
    )
    assert run.of_type("compaction_end")[-1] == {
        "type": "compaction_end",
        "reason": "manual",
        "aborted": False,
        "willRetry": False,
        "errorMessage": "Compaction failed: Already compacted",
    }
    failed = observer.calls("session_compact_failed")
    assert failed == [
        {
            "reason": "manual",
            "error_message": "Compaction failed: Already compacted",
            "aborted": False,
            "will_retry": False,
            "from_extension": False,
        }
    ]
    assert len(run.requests) == 2


async def test_manual_compaction_failure_is_reported_and_appends_nothing(build: Builder) -> None:
    observer = Observer()
    run = await build(settings=SETTINGS, plugins=(observer,))
    run.server.add(text_reply("answer", usage=usage(input=100)))
    await bounded(run.agent.prompt("question"))
    run.server.add(error_reply(401, "invalid x-api-key"))
    verdict = await bounded(run.agent.compact())
    assert verdict.compacted is False
    assert verdict.error_message.startswith("Compaction failed: Summarization failed: 401")
    assert run.of_type("compaction_end")[-1]["errorMessage"] == verdict.error_message
    assert "result" not in run.of_type("compaction_end")[-1]
    (failed,) = observer.calls("session_compact_failed")
    assert failed["error_message"] == verdict.error_message and failed["aborted"] is False
    assert run.entries("compaction") == []
    assert run.of_type("summarization_retry_scheduled") == []  # a 401 is not retried


async def test_a_plugin_can_supply_the_compaction(build: Builder) -> None:
    supplied_usage = {
        "input": 7,
        "output": 3,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 10,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    observer = Observer(
        lambda prep: {
            "compaction": {
                "summary": "Plugin summary",
                "first_kept_entry_id": prep.first_kept_entry_id,
                "tokens_before": prep.tokens_before,
                "usage": supplied_usage,
                "details": {"mine": 1},
            }
        }
    )
    run = await build(settings=SETTINGS, plugins=(observer,))
    run.server.add(text_reply("answer", usage=usage(input=8500)))
    await bounded(run.agent.prompt("question " + "q" * 600))

    assert len(run.requests) == 1  # no summary request
    (entry,) = run.entries("compaction")
    assert entry["summary"] == "Plugin summary" and entry["fromHook"] is True
    assert entry["usage"] == supplied_usage and entry["details"] == {"mine": 1}
    assert observer.calls("session_compact")[0]["from_extension"] is True
    assert run.of_type("compaction_end")[0]["result"]["summary"] == "Plugin summary"
    # A compaction a plugin supplied is not trusted for file lists on the next default one.
    assert run.agent.messages[0]["role"] == "compactionSummary"


async def test_a_plugin_can_cancel_the_compaction(build: Builder) -> None:
    observer = Observer(lambda prep: {"cancel": True})
    run = await build(settings=SETTINGS, plugins=(observer,))
    run.server.add(text_reply("answer", usage=usage(input=8500)))
    await bounded(run.agent.prompt("question"))
    assert run.of_type("compaction_end") == [
        {"type": "compaction_end", "reason": "threshold", "aborted": True, "willRetry": False}
    ]
    assert observer.calls("session_compact_failed") == [
        {
            "reason": "threshold",
            "error_message": None,
            "aborted": True,
            "will_retry": False,
            "from_extension": False,
        }
    ]
    assert run.entries("compaction") == [] and len(run.requests) == 1


async def test_per_model_overrides_decide_the_threshold_and_the_preparation(build: Builder) -> None:
    settings = {
        "compaction": {
            "reserveTokens": 2000,
            "keepRecentTokens": 100,
            "modelOverrides": {f"{PROVIDER}/{SMALL}": {"reserveTokens": 5000}},
        }
    }
    observer = Observer()
    run = await build(settings=settings, plugins=(observer,))
    run.server.add(
        text_reply("answer", usage=usage(input=6000)), summary_reply()
    )  # over 10000 - 5000
    await bounded(run.agent.prompt("question"))
    (before,) = observer.calls("session_before_compact")
    assert (
        before["preparation"].settings.reserve_tokens,
        before["preparation"].settings.keep_recent_tokens,
    ) == (5000, 100)

    other = await build(settings=settings, model=LARGE)
    other.server.add(text_reply("answer", usage=usage(input=97000)))  # ordinary reserve: 98 000
    await bounded(other.agent.prompt("question"))
    assert other.of_type("compaction_start") == []


async def test_disabled_automatic_compaction_leaves_overflows_and_thresholds_alone(
    build: Builder,
) -> None:
    run = await build(settings={"compaction": {"enabled": False, "reserveTokens": 2000}})
    run.server.add(text_reply("answer", usage=usage(input=9000)))
    await bounded(run.agent.prompt("question"))
    run.server.add(error_reply(400, "prompt is too long: 12000 tokens > 10000 maximum"))
    await bounded(run.agent.prompt("more"))
    assert run.of_type("compaction_start") == [] and len(run.requests) == 2
    assert run.of_type("agent_end")[-1]["willRetry"] is False
    assert run.agent.messages[-1]["stopReason"] == "error"
    run.server.add(summary_reply())
    assert (await bounded(run.agent.compact())).compacted is True  # manual still works


async def test_repeated_compaction_folds_the_previous_summary_and_its_kept_messages(
    build: Builder,
) -> None:
    run = await build(settings=SETTINGS)
    run.server.add(text_reply("answer one", usage=usage(input=100)))
    await bounded(run.agent.prompt("question one"))
    run.server.add(text_reply("answer two", usage=usage(input=100)))
    await bounded(run.agent.prompt("question two " + "q" * 600))
    run.server.add(summary_reply("## Goal\nfirst summary"))
    await bounded(run.agent.compact())
    first = run.entries("compaction")[0]
    assert first["firstKeptEntryId"] == entry_of(run, "user", "question two")["id"]
    run.server.add(text_reply("answer three", usage=usage(input=100)))
    await bounded(run.agent.prompt("question three " + "t" * 600))
    run.server.add(summary_reply("## Goal\nsecond summary"))
    await bounded(run.agent.compact())

    prompt = run.prompt_text(4)
    # The messages the first compaction kept are summarized now, with the first summary.
    assert prompt.startswith("<conversation>\n[User]: question two q")
    assert "[Assistant]: answer two" in prompt and "question one" not in prompt
    assert "<previous-summary>\n## Goal\nfirst summary\n</previous-summary>" in prompt
    assert UPDATE_PROMPT in prompt
    second = run.entries("compaction")[1]
    assert second["firstKeptEntryId"] == entry_of(run, "user", "question three")["id"]
