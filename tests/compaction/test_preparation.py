"""``prepare_compaction``: split spans, repeated-compaction boundaries, retain-none, file lists,
and the recovery rule that advances the kept boundary into a context-invisible suffix."""

from __future__ import annotations

from typing import Any

from knightcode import CompactionSettings as DefaultBudgets
from knightcode_builtins.compaction.cut_point import find_cut_point
from knightcode_builtins.compaction.preparation import prepare_compaction

from .entries import Chain, assistant, bash, tool_result, user

BIG = "x" * 4000  # 1000 tokens


def budgets(keep: int) -> DefaultBudgets:
    return DefaultBudgets(reserve_tokens=1000, keep_recent_tokens=keep)


def texts(messages: list[Any]) -> list[str]:
    out = []
    for message in messages:
        content = message.get("content") or message.get("summary")
        if isinstance(content, list):
            content = "".join(b.get("text", "") for b in content if b.get("type") == "text")
        out.append(str(content)[:12])
    return out


def test_nothing_to_prepare_right_after_a_compaction() -> None:
    chain = Chain()
    u = chain.message(user("hi"))
    chain.message(assistant("hello"))
    chain.compaction("sum", u["id"])
    assert prepare_compaction(chain.entries, budgets(10)) is None


def test_ordinary_cut_at_a_user_message() -> None:
    chain = Chain()
    chain.message(user("old question"))
    chain.message(assistant("old answer " + BIG))
    kept = chain.message(user("new question " + BIG))
    chain.message(assistant("new answer " + BIG))
    prep = prepare_compaction(chain.entries, budgets(1500))
    assert prep is not None
    assert prep.first_kept_entry_id == kept["id"]
    assert not prep.is_split_turn and prep.turn_prefix_messages == []
    assert texts(prep.messages_to_summarize) == ["old question", "old answer x"]
    assert prep.tokens_before == 150  # the last assistant usage (100 + 50), nothing after it
    assert prep.previous_summary is None


def test_split_user_message_span() -> None:
    chain = Chain()
    chain.message(user("earlier"))
    chain.message(assistant("earlier answer"))
    start = chain.message(user("big task"))
    chain.message(assistant("step 1", calls=[("read", {"path": "a.py"})]))
    chain.message(tool_result(BIG))
    kept = chain.message(assistant("step 2", calls=[("edit", {"path": "b.py"})]))
    chain.message(tool_result(BIG))
    # A tool result alone cannot be cut at: the budget must run out at an assistant message.
    prep = prepare_compaction(chain.entries, budgets(1005))
    assert prep is not None
    assert prep.is_split_turn and prep.first_kept_entry_id == kept["id"]
    assert texts(prep.messages_to_summarize) == ["earlier", "earlier answ"]
    assert texts(prep.turn_prefix_messages) == ["big task", "step 1", "x" * 12]
    assert start["id"] not in prep.first_kept_entry_id
    assert prep.file_ops.read == {"a.py"} and prep.file_ops.edited == set()  # b.py is kept


def test_a_cut_at_a_bash_execution_is_a_split_with_an_empty_prefix() -> None:
    chain = Chain()
    chain.message(user("u"))
    chain.message(assistant("a " + BIG))
    cut = chain.message(bash("make", BIG))
    result = find_cut_point(chain.entries, 0, len(chain.entries), 1000)
    assert result.first_kept_entry_index == 2 == result.turn_start_index and result.is_split_turn
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert (
        prep is not None
        and prep.first_kept_entry_id == cut["id"]
        and prep.turn_prefix_messages == []
    )


def test_repeated_compaction_starts_at_the_previous_kept_boundary() -> None:
    chain = Chain()
    chain.message(user("first"))
    chain.message(assistant("one " + BIG))
    kept = chain.message(user("second"))
    chain.message(assistant("two " + BIG))
    chain.compaction(
        "summary one", kept["id"], details={"readFiles": ["r.py"], "modifiedFiles": ["m.py"]}
    )
    chain.message(user("third"))
    chain.message(assistant("three " + BIG))
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None
    # What survived the first compaction is summarized again, with the previous summary.
    assert texts(prep.messages_to_summarize) == ["second", "two xxxxxxxx"]
    assert prep.previous_summary == "summary one"
    assert prep.file_ops.read == {"r.py"} and prep.file_ops.edited == {"m.py"}


def test_previous_kept_entry_missing_falls_back_to_after_the_compaction() -> None:
    chain = Chain()
    chain.message(user("first"))
    chain.message(assistant("one " + BIG))
    chain.compaction("summary one", "no-such-entry")
    chain.message(user("second"))
    chain.message(assistant("two " + BIG))
    chain.message(user("third"))
    chain.message(assistant("three " + BIG))
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and texts(prep.messages_to_summarize) == ["second", "two xxxxxxxx"]


def test_retain_none_compaction_continues_after_itself() -> None:
    chain = Chain()
    chain.message(user("first"))
    chain.message(assistant("one " + BIG))
    compaction = chain.compaction("summary one", "")
    compaction["firstKeptEntryId"] = compaction["id"]  # retain-none records its own id
    chain.message(user("second"))
    chain.message(assistant("two " + BIG))
    chain.message(user("third"))
    chain.message(assistant("three " + BIG))
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and texts(prep.messages_to_summarize) == ["second", "two xxxxxxxx"]


def test_file_lists_are_not_carried_from_plugin_compactions() -> None:
    chain = Chain()
    kept = chain.message(user("first"))
    chain.compaction(
        "plugin summary",
        kept["id"],
        details={"readFiles": ["r.py"], "modifiedFiles": []},
        from_hook=True,
    )
    chain.message(assistant("one", calls=[("write", {"path": "w.py"})]))
    chain.message(tool_result(BIG))
    chain.message(user("second " + BIG))
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and prep.file_ops.read == set() and prep.file_ops.written == {"w.py"}


def test_omitted_entries_do_not_count_or_get_summarized() -> None:
    chain = Chain()
    chain.message(user("question"))
    hidden = chain.message(
        assistant(
            "abandoned " + BIG * 5,
            use={"input": 9999, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 10000},
        )
    )
    chain.edit({"op": "omit", "targetId": hidden["id"]})
    kept = chain.message(user("again"))
    chain.message(assistant("fine " + BIG))
    edit = chain.entries[2]
    prep = prepare_compaction(chain.entries, budgets(1003))
    assert prep is not None
    # The cut at "again" extends back over the context_edit (metadata stays with what follows
    # it); like any cut landing on metadata, the reference then treats it as a split span.
    assert prep.first_kept_entry_id == edit["id"] != kept["id"]
    summarized = texts(prep.messages_to_summarize + prep.turn_prefix_messages)
    assert summarized == ["question"]  # the abandoned answer is neither kept nor summarized
    assert prep.tokens_before == 150  # nor counted: its usage (10000) is ignored


def recovery_chain(
    prompt: str, *, extra: str | None = None
) -> tuple[Chain, dict[str, Any], dict[str, Any]]:
    """History, a prompt, a failed attempt omitted by a context_edit (then ``extra``)."""
    chain = Chain()
    chain.message(user("earlier"))
    chain.message(assistant("earlier answer"))
    prompt_entry = chain.message(user(prompt))
    failed = chain.message(assistant("", stop="error"))
    chain.edit({"op": "omit", "targetId": failed["id"]})
    if extra == "metadata":
        chain.model_change("anthropic", "other")
    elif extra == "custom":
        chain.custom_message("a note appended after the attempt")
    return chain, prompt_entry, failed


def test_an_over_budget_recovered_input_is_summarized() -> None:
    chain, _prompt, failed = recovery_chain("huge input " + BIG * 3)
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and prep.retain_none
    assert prep.first_kept_entry_id == failed["id"]  # the invisible suffix starts at the attempt
    assert texts(prep.messages_to_summarize) == ["earlier", "earlier answ", "huge input x"]


def test_metadata_after_the_attempt_does_not_change_the_rule() -> None:
    chain, _, failed = recovery_chain("huge input " + BIG * 3, extra="metadata")
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and prep.retain_none and prep.first_kept_entry_id == failed["id"]


def test_a_recovered_input_within_budget_is_kept() -> None:
    chain, _prompt, _ = recovery_chain("small input")
    chain.entries[1]["message"]["content"][0]["text"] += BIG  # the history is what is big
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and not prep.retain_none
    assert prep.first_kept_entry_id == chain.entries[1]["id"]  # the input is kept verbatim
    assert texts(prep.turn_prefix_messages) == ["earlier"]


def test_metadata_alone_does_not_move_the_cut() -> None:
    chain = Chain()
    chain.message(user("earlier"))
    prompt = chain.message(user("huge input " + BIG * 3))
    chain.model_change("anthropic", "other")
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and not prep.retain_none and prep.first_kept_entry_id == prompt["id"]


def test_a_custom_message_after_the_attempt_blocks_advancement() -> None:
    chain, _prompt, _ = recovery_chain("huge input " + BIG * 3, extra="custom")
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and not prep.retain_none


def test_a_replacement_of_the_input_blocks_advancement() -> None:
    chain, prompt, _ = recovery_chain("huge input " + BIG * 3)
    chain.edit({"op": "replace", "targetId": prompt["id"], "message": user("edited " + BIG * 3)})
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and not prep.retain_none


def test_a_replaced_suffix_entry_that_is_omitted_in_the_end_is_safe() -> None:
    chain, _, failed = recovery_chain("huge input " + BIG * 3)
    chain.edit({"op": "replace", "targetId": failed["id"], "message": assistant("replaced")})
    chain.edit({"op": "omit", "targetId": failed["id"]})
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and prep.retain_none


def test_labels_of_summarized_entries_are_pinned() -> None:
    chain = Chain()
    first = chain.message(user("first " + BIG))
    chain.label(first["id"], "the plan")
    chain.message(user("second " + BIG))
    prep = prepare_compaction(chain.entries, budgets(1000))
    assert prep is not None and prep.labels == ["the plan"]
