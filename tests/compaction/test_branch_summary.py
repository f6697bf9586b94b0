"""Tree navigation with branch summaries (``navigate_tree``): the common ancestor, the entries
summarized, the default summary with file lists, ``session_before_tree`` (cancel, custom
summary, instructions, label), ``session_tree``, and navigation without a summary (``/undo``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from knightcode import AbortSignal, hookimpl
from knightcode._agent.session import CompactionUnavailableError
from knightcode._agent.tree_navigation import TreeResult, navigate_tree
from knightcode.testing import error_reply, text_reply, tool_call, tool_call_reply, usage
from knightcode_builtins.compaction.branch import prepare_branch_entries
from knightcode_builtins.compaction.prompts import BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT
from tests.harness import Builder, Run, bounded, summary_reply

from .entries import Chain, assistant, tool_result, user


class TreeObserver:
    plugin_name = "tree-observer"

    def __init__(self, answer: Any = None) -> None:
        self.answer = answer
        self.preparations: list[Any] = []
        self.trees: list[dict[str, Any]] = []

    @hookimpl
    def session_before_tree(self, preparation: Any, signal: Any) -> Any:
        self.preparations.append(preparation)
        return self.answer

    @hookimpl
    def session_tree(
        self, new_leaf_id: Any, old_leaf_id: Any, summary_entry: Any, from_extension: bool
    ) -> None:
        self.trees.append(
            {"new": new_leaf_id, "old": old_leaf_id, "entry": summary_entry, "ext": from_extension}
        )


SETTINGS: dict[str, Any] = {"compaction": {"reserveTokens": 2000}}  # no automatic compaction here


async def explore(run: Run, project: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """First exchange (kept), then a branch that reads a file; returns (first answer, old leaf)."""
    (project / "a.txt").write_text("alpha\n")
    run.server.add(text_reply("answer one", usage=usage(input=100)))
    await bounded(run.agent.prompt("question one"))
    first_answer = run.agent.session.get_leaf_entry()
    run.server.add(
        tool_call_reply([tool_call("c1", "read", {"path": "a.txt"})]), text_reply("it says alpha")
    )
    await bounded(run.agent.prompt("what is in a.txt?"))
    leaf = run.agent.session.get_leaf_entry()
    assert first_answer is not None and leaf is not None
    return dict(first_answer), dict(leaf)


async def test_navigation_with_the_default_branch_summary(
    build: Builder, project_dir: Path
) -> None:
    observer = TreeObserver()
    run = await build(settings=SETTINGS, plugins=(observer,))
    first_answer, old_leaf = await explore(run, project_dir)
    run.server.add(summary_reply("## Goal\nread a.txt"))
    result = await bounded(navigate_tree(run.agent, first_answer["id"], summarize=True))

    (prep,) = observer.preparations
    assert (prep.target_id, prep.old_leaf_id, prep.common_ancestor_id) == (
        first_answer["id"],
        old_leaf["id"],
        first_answer["id"],
    )
    assert [e["message"]["role"] for e in prep.entries_to_summarize] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert prep.user_wants_summary is True
    prompt = run.prompt_text(3)
    # Tool results are skipped: the calls say what was done.
    assert prompt == (
        "<conversation>\n[User]: what is in a.txt?\n\n"
        '[Assistant tool calls]: read(path="a.txt")\n\n'
        "[Assistant]: it says alpha\n</conversation>\n\n"
        + BRANCH_SUMMARY_PROMPT
        # The cap (1250) less the preamble and the file list stored with the summary.
        + "\n\nKeep the whole summary under 1213 tokens."
    )
    entry = result.summary_entry
    assert entry is not None
    assert result.cancelled is False and result.editor_text is None
    assert entry["type"] == "branch_summary" and entry["parentId"] == first_answer["id"]
    assert entry["fromId"] == old_leaf["id"] and "fromHook" not in entry
    assert (
        entry["summary"]
        == BRANCH_SUMMARY_PREAMBLE + "## Goal\nread a.txt\n\n<read-files>\na.txt\n</read-files>"
    )
    assert entry["details"] == {"readFiles": ["a.txt"], "modifiedFiles": []}
    assert entry["usage"]["totalTokens"] == 550
    assert run.agent.session.leaf_id == entry["id"]
    assert [m["role"] for m in run.agent.messages] == ["user", "assistant", "branchSummary"]
    assert observer.trees == [
        {"new": entry["id"], "old": old_leaf["id"], "entry": entry, "ext": False}
    ]

    # Summaries nest: leaving the new branch carries the file lists of the summary in it.
    run.server.add(
        tool_call_reply([tool_call("c2", "write", {"path": "c.txt", "content": "c"})]),
        text_reply("wrote"),
    )
    await bounded(run.agent.prompt("write c.txt"))
    run.server.add(summary_reply("## Goal\nwrote c"))
    nested = await bounded(navigate_tree(run.agent, first_answer["id"], summarize=True))
    assert nested.summary_entry is not None
    assert nested.summary_entry["details"] == {"readFiles": ["a.txt"], "modifiedFiles": ["c.txt"]}
    assert "[User]: The following is a summary of a branch" in run.prompt_text(6)


async def test_navigation_without_a_summary_never_asks_the_model(
    build: Builder, project_dir: Path
) -> None:
    observer = TreeObserver()
    run = await build(settings=SETTINGS, plugins=(observer,))
    _first_answer, _ = await explore(run, project_dir)
    question = next(
        e
        for e in run.entries("message")
        if e["message"].get("content") == [{"type": "text", "text": "what is in a.txt?"}]
    )
    requests = len(run.requests)
    # Going back to a user message (what /undo does) puts its text back into the editor.
    result = await bounded(
        navigate_tree(run.agent, question["id"], summarize=False, label="retry here")
    )
    assert result == TreeResult(editor_text="what is in a.txt?")
    assert observer.preparations[0].user_wants_summary is False
    assert observer.preparations[0].summarizer is None
    assert len(run.requests) == requests and run.entries("branch_summary") == []
    assert run.agent.session.get_label(question["id"]) == "retry here"
    assert [m["role"] for m in run.agent.messages] == ["user", "assistant"]
    assert observer.trees[0]["entry"] is None and observer.trees[0]["ext"] is False


async def test_a_plugin_can_cancel_the_navigation(build: Builder, project_dir: Path) -> None:
    run = await build(settings=SETTINGS, plugins=(TreeObserver({"cancel": True}),))
    first_answer, old_leaf = await explore(run, project_dir)
    assert await navigate_tree(run.agent, first_answer["id"], summarize=True) == TreeResult(
        cancelled=True
    )
    assert run.agent.session.leaf_id == old_leaf["id"] and len(run.requests) == 3


async def test_a_plugin_can_supply_the_summary(build: Builder, project_dir: Path) -> None:
    supplied = {"summary": {"summary": "Plugin branch summary", "details": {"mine": True}}}
    observer = TreeObserver(supplied)
    run = await build(settings=SETTINGS, plugins=(observer,))
    first_answer, _ = await explore(run, project_dir)
    result = await navigate_tree(run.agent, first_answer["id"], summarize=True)
    entry = result.summary_entry
    assert entry is not None
    assert entry["summary"] == "Plugin branch summary" and entry["fromHook"] is True
    assert entry["details"] == {"mine": True} and len(run.requests) == 3  # no summary request
    assert observer.trees[0]["ext"] is True


async def test_a_plugin_summary_is_ignored_when_none_was_asked_for(
    build: Builder, project_dir: Path
) -> None:
    run = await build(
        settings=SETTINGS, plugins=(TreeObserver({"summary": {"summary": "unwanted"}}),)
    )
    first_answer, _ = await explore(run, project_dir)
    result = await navigate_tree(run.agent, first_answer["id"], summarize=False)
    assert result == TreeResult() and run.entries("branch_summary") == []


async def test_a_plugin_can_change_the_instructions_and_the_label(
    build: Builder, project_dir: Path
) -> None:
    answer = {
        "custom_instructions": "List the commands only.",
        "replace_instructions": True,
        "label": "explored",
    }
    run = await build(settings=SETTINGS, plugins=(TreeObserver(answer),))
    first_answer, _ = await explore(run, project_dir)
    run.server.add(summary_reply("- read"))
    result = await bounded(
        navigate_tree(
            run.agent, first_answer["id"], summarize=True, custom_instructions="ignored focus"
        )
    )
    assert run.prompt_text(3).endswith(
        "</conversation>\n\nList the commands only.\n\nKeep the whole summary under 1213 tokens."
    )
    assert BRANCH_SUMMARY_PROMPT not in run.prompt_text(3)
    assert result.summary_entry is not None
    assert run.agent.session.get_label(result.summary_entry["id"]) == "explored"


async def test_user_instructions_are_added_as_a_focus(build: Builder, project_dir: Path) -> None:
    run = await build(settings=SETTINGS)
    first_answer, _ = await explore(run, project_dir)
    run.server.add(error_reply(503, "overloaded"), summary_reply())
    await bounded(
        navigate_tree(run.agent, first_answer["id"], summarize=True, custom_instructions="the file")
    )
    assert BRANCH_SUMMARY_PROMPT + "\n\nAdditional focus: the file" in run.prompt_text(4)
    assert run.of_type("summarization_retry_attempt_start") == [
        {"type": "summarization_retry_attempt_start", "source": "branchSummary"}
    ]
    assert run.of_type("summarization_retry_finished") == [{"type": "summarization_retry_finished"}]


async def test_an_aborted_summary_leaves_the_tree_alone(build: Builder, project_dir: Path) -> None:
    run = await build(settings=SETTINGS)
    first_answer, old_leaf = await explore(run, project_dir)
    run.server.add(text_reply("## Goal", " slow", delay=0.5))
    signal = AbortSignal()
    task = asyncio.ensure_future(
        navigate_tree(run.agent, first_answer["id"], summarize=True, signal=signal)
    )
    await asyncio.to_thread(run.server.wait_for_requests, 4)
    signal.abort()
    assert await bounded(task) == TreeResult(cancelled=True, aborted=True)
    assert run.agent.session.leaf_id == old_leaf["id"] and run.entries("branch_summary") == []


async def test_without_the_compaction_plugin_summaries_are_refused(
    build: Builder, project_dir: Path, agent_dir: Path
) -> None:
    run = await build(settings={**SETTINGS, "extensions": ["-builtin:compaction"]})
    first_answer, old_leaf = await explore(run, project_dir)
    with pytest.raises(CompactionUnavailableError, match="branch summaries are disabled"):
        await navigate_tree(run.agent, first_answer["id"], summarize=True)
    assert run.agent.session.leaf_id == old_leaf["id"]
    assert (await navigate_tree(run.agent, first_answer["id"], summarize=False)).cancelled is False


def test_branch_entries_are_taken_newest_first_within_the_budget() -> None:
    chain = Chain()
    chain.compaction("old summary " + "s" * 400, "x")  # 103 tokens
    chain.message(user("first " + "f" * 400))  # 102 tokens
    chain.message(assistant("", calls=[("edit", {"path": "e.py"})]))  # 5 tokens
    chain.message(tool_result("ignored " * 100))  # skipped
    chain.message(user("last"))  # 1 token
    compaction, first, _call, _, last = chain.entries
    messages, ops, total = prepare_branch_entries(chain.entries, token_budget=100)
    # "first" does not fit: the walk stops there, but its file operations were already seen.
    assert (
        [m["role"] for m in messages] == ["assistant", "user"]
        and total == 6
        and ops.edited == {"e.py"}
    )
    # A summary that does not fit is still taken while less than 90 % of the budget is used …
    messages, _, total = prepare_branch_entries([compaction, last], token_budget=100)
    assert [m["role"] for m in messages] == ["compactionSummary", "user"] and total == 104
    # … and not beyond that.
    messages, _, total = prepare_branch_entries([compaction, first, last], token_budget=110)
    assert [m["role"] for m in messages] == ["user", "user"] and total == 103
    assert len(prepare_branch_entries(chain.entries)[0]) == 4  # no budget: everything


async def test_branch_summary_reserve_tokens_bound_what_is_summarized(
    build: Builder, project_dir: Path
) -> None:
    # The model's window is 10 000 tokens: a 9 995 reserve leaves 5 for the branch, which the
    # newest messages fill; the question that started the branch is left out.
    settings = {**SETTINGS, "branchSummary": {"reserveTokens": 9995}}
    run = await build(settings=settings)
    first_answer, _old_leaf = await explore(run, project_dir)
    run.server.add(summary_reply("## Goal\nread a.txt"))
    await bounded(navigate_tree(run.agent, first_answer["id"], summarize=True))
    prompt = run.prompt_text(3)
    assert "[Assistant]: it says alpha" in prompt
    assert "what is in a.txt?" not in prompt
