"""The instructions for the summaries this plugin asks for besides the ordinary checkpoint
(``knightcode._llm.summary`` holds that one and the system prompt), and how pieces are joined.

Every prompt names its markdown sections exactly; the model is asked to answer with nothing else.
"""

from __future__ import annotations

__all__ = [
    "BRANCH_SUMMARY_PREAMBLE",
    "BRANCH_SUMMARY_PROMPT",
    "NO_PRIOR_HISTORY",
    "SPLIT_TURN_SEPARATOR",
    "TURN_PREFIX_PROMPT",
    "branch_instructions",
    "merge_split_turn",
]

TURN_PREFIX_PROMPT = """The <conversation> tags hold only the beginning of one long exchange: \
the user's request and the first part of the work on it. The rest of that exchange is kept \
word for word after your summary, so write what is needed to understand it, with exactly these \
markdown sections:

## Original Request
[What the user asked for in this exchange]

## Early Progress
- [Work done and decisions made in this beginning part]

## Context for Suffix
- [What the kept remainder relies on: files, values, findings, open questions]

Be brief."""
"""Instructions for the early part of a split user-message span."""

BRANCH_SUMMARY_PROMPT = """The <conversation> tags hold a branch of the conversation that the \
user is leaving for now; they may come back to it later. Summarize it with exactly this markdown \
structure, every heading included:

## Goal
[What the user was trying to achieve on this branch]

## Constraints & Preferences
- [Requirements and preferences stated, or "(none)"]

## Progress
### Done
- [x] [Tasks and changes that were finished]

### In Progress
- [ ] [Work that was started and not finished]

### Blocked
- [What stood in the way, or "(none)"]

## Key Decisions
- **[Decision]**: [Why it was chosen]

## Next Steps
1. [What would continue this work, in order]

Keep every section short. Copy file paths, function names, commands and error messages exactly."""
"""Instructions for the summary of an abandoned branch (``/tree``)."""

BRANCH_SUMMARY_PREAMBLE = (
    "Before coming back to this point, the user explored another branch of the conversation. "
    "What happened there:\n\n"
)
"""Put before a generated branch summary, so the model knows where it comes from."""

NO_PRIOR_HISTORY = "No prior history."
"""The history half of a split-span summary when nothing precedes the span."""

SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"


def merge_split_turn(history: str, prefix: str) -> str:
    """One summary from the history summary and the split span's prefix summary."""
    return history + SPLIT_TURN_SEPARATOR + prefix


def branch_instructions(custom: str | None, replace: bool) -> str:
    """The branch prompt, with ``custom`` appended as a focus or, with ``replace``, instead."""
    if custom and replace:
        return custom
    if custom:
        return f"{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {custom}"
    return BRANCH_SUMMARY_PROMPT
