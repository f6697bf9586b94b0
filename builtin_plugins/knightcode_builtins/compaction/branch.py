"""The default summary of a branch left through ``/tree`` (the reference's branch summarization).

The entries from the old leaf back to the common ancestor are turned into messages newest
first until the token budget (the model's window minus ``branchSummary.reserveTokens``) is
used up — a compaction or branch summary that does not fit is still taken while less than 90 %
of the budget is used, since it condenses much. Tool results are skipped (the calls say what
was done); file lists are carried from earlier default branch summaries in those entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knightcode import (
    BranchSummary,
    FileOperations,
    create_compaction_summary_message,
    estimate_tokens,
)

from .file_ops import carry_details, compute_file_lists, extract_file_ops, format_file_operations
from .preparation import message_of
from .prompts import BRANCH_SUMMARY_PREAMBLE, branch_instructions
from .summarize import Summarizer, cap_left

if TYPE_CHECKING:
    from knightcode import AbortSignal, AgentHandle, AgentMessage, HookContext, SessionEntry

__all__ = ["DefaultBranchSummarizer", "prepare_branch_entries"]


def _branch_message(entry: SessionEntry) -> AgentMessage | None:
    if entry["type"] == "compaction":
        return create_compaction_summary_message(
            entry["summary"], entry["tokensBefore"], entry["timestamp"]
        )
    message = message_of(entry)
    if message is not None and message["role"] == "toolResult":
        return None
    return message


def prepare_branch_entries(
    entries: Sequence[SessionEntry], token_budget: int = 0
) -> tuple[list[AgentMessage], FileOperations, int]:
    """``(messages, file_ops, tokens)`` for the entries (oldest first) within ``token_budget``
    (0: no limit); see the module docstring.
    """
    ops = FileOperations()
    for entry in entries:
        if entry["type"] == "branch_summary":
            carry_details(entry, ops)
    messages: list[AgentMessage] = []
    total = 0
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        extract_file_ops([message], ops)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if entry["type"] in ("compaction", "branch_summary") and total < token_budget * 0.9:
                messages.append(message)
                total += tokens
            break
        messages.append(message)
        total += tokens
    messages.reverse()
    return messages, ops, total


@dataclass
class DefaultBranchSummarizer:
    """Offered on the tree preparation as its ``summarizer``; called by the navigation with the
    final instructions (after every ``session_before_tree`` handler had its say).
    """

    agent: AgentHandle
    ctx: HookContext

    async def __call__(
        self,
        entries: list[SessionEntry],
        *,
        custom_instructions: str | None,
        replace_instructions: bool,
        signal: AbortSignal,
    ) -> BranchSummary:
        """The summary of ``entries``.

        :raises knightcode.Aborted: the signal was set
        :raises knightcode.SummarizationError: the summary could not be generated
        """
        agent = self.agent
        model = agent.model
        reserve = self.ctx.settings.model.branch_summary.reserve_tokens
        messages, ops, _ = prepare_branch_entries(entries, model.context_window - reserve)
        if not messages:
            return BranchSummary("No content to summarize")
        summarizer = Summarizer(
            model,
            agent.model_registry,
            signal,
            agent.publish,
            "branchSummary",
            None,
            agent.retry,
            agent.thinking_level,
        )
        instructions = branch_instructions(custom_instructions, replace_instructions)
        # The cap holds for what is stored: preamble, summary and file lists together.
        read, modified = compute_file_lists(ops)
        files = format_file_operations(read, modified, limit_tokens=summarizer.cap_tokens // 4)
        budget = cap_left(summarizer.cap_tokens, BRANCH_SUMMARY_PREAMBLE, files)
        text = await summarizer.summarize(messages, instructions=instructions, cap_tokens=budget)
        return BranchSummary(
            BRANCH_SUMMARY_PREAMBLE + text + files,
            {"readFiles": read, "modifiedFiles": modified},
            summarizer.usage,
        )
