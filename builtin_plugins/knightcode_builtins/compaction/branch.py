"""The default summary of a branch left through ``/tree`` (the reference's branch summarization).

The entries from the old leaf back to the common ancestor are turned into messages newest
first until the token budget (the model's window minus ``branchSummary.reserveTokens``) is
used up — a compaction or branch summary that does not fit is still taken while less than 90 %
of the budget is used, since it condenses much. Tool results are skipped (the calls say what
was done); file lists are carried from earlier default branch summaries in those entries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from knightcode._session import estimate_tokens
from knightcode._session.messages import create_compaction_summary_message

from .file_ops import (
    FileOperations,
    carry_details,
    compute_file_lists,
    extract_file_ops,
    format_file_operations,
)
from .preparation import message_of
from .prompts import BRANCH_SUMMARY_PREAMBLE, branch_instructions
from .summarize import Summarizer

__all__ = ["BranchSummarizer", "prepare_branch_entries"]

DEFAULT_RESERVE_TOKENS = 16384


def _branch_message(entry: Any) -> Any:
    if entry.get("type") == "compaction":
        return create_compaction_summary_message(
            entry.get("summary", ""), entry.get("tokensBefore", 0), entry.get("timestamp", "")
        )
    message = message_of(entry)
    if message is not None and message.get("role") == "toolResult":
        return None
    return message


def prepare_branch_entries(
    entries: Sequence[Any], token_budget: int = 0
) -> tuple[list[Any], FileOperations, int]:
    """``(messages, file_ops, tokens)`` for the entries (oldest first) within ``token_budget``
    (0: no limit); see the module docstring.
    """
    ops = FileOperations()
    for entry in entries:
        if entry.get("type") == "branch_summary":
            carry_details(entry, ops)
    messages: list[Any] = []
    total = 0
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        extract_file_ops([message], ops)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if entry.get("type") in ("compaction", "branch_summary") and total < token_budget * 0.9:
                messages.append(message)
                total += tokens
            break
        messages.append(message)
        total += tokens
    messages.reverse()
    return messages, ops, total


@dataclass
class BranchSummarizer:
    """Offered on the tree preparation as its ``summarizer``; called by the navigation with the
    final instructions (after every ``session_before_tree`` handler had its say).
    """

    agent: Any
    ctx: Any

    async def __call__(
        self,
        entries: list[Any],
        *,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        signal: asyncio.Event | None = None,
    ) -> dict[str, Any]:
        """``{"summary", "details", "usage"}``, or ``{"aborted": True}``.

        :raises knightcode._llm.summary.SummarizationError: the summary could not be generated
        """
        from knightcode._llm.summary import SummarizationAborted

        agent = self.agent
        model = agent.model
        budget = int(model.context_window or 128000) - self._reserve_tokens()
        messages, ops, _ = prepare_branch_entries(entries, budget)
        if not messages:
            return {"summary": "No content to summarize"}
        summarizer = Summarizer(
            model,
            agent.models,
            signal or asyncio.Event(),
            agent.publish,
            "branchSummary",
            None,
            getattr(agent, "retry", None),
            getattr(agent, "thinking_level", None),
        )
        instructions = branch_instructions(custom_instructions, replace_instructions)
        try:
            text = await summarizer.summarize(messages, instructions=instructions)
        except SummarizationAborted:
            return {"aborted": True}
        read, modified = compute_file_lists(ops)
        result: dict[str, Any] = {
            "summary": BRANCH_SUMMARY_PREAMBLE + text + format_file_operations(read, modified),
            "details": {"readFiles": read, "modifiedFiles": modified},
        }
        if summarizer.usage is not None:
            result["usage"] = summarizer.usage
        return result

    def _reserve_tokens(self) -> int:
        settings: Any = getattr(self.ctx, "settings", None)
        try:
            return int(settings.model.branch_summary.reserve_tokens)
        except AttributeError:
            return DEFAULT_RESERVE_TOKENS
