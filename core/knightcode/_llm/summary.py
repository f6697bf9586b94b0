"""One-off summarization requests: what compaction, branch summaries and plugins send to a model.

The conversation is flattened to text
(:func:`~knightcode._session.serialization.serialize_conversation`) inside ``<conversation>``
tags, followed by an optional ``<previous-summary>`` and the instructions, so the model writes a
summary instead of continuing the conversation. Every request

* writes no prompt-cache entries (``cache_retention="none"``): a one-off prompt is never reused,
  and cache writes cost more than plain input;
* asks for at most the model's output limit, reduced so that input plus output fit the context
  window (the input is estimated like every other size: UTF-16 characters / 4, plus a margin);
* thinks only on reasoning models, at the given level (``"off"`` or None: no thinking).

:func:`generate_summary_with_usage` returns the text and the request's usage (store it, so session
totals include summarization work); :func:`generate_summary` only the text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from knightcode._abort import Aborted, AbortSignal
from knightcode._errors import KnightcodeError
from knightcode._llm.errors import is_context_overflow, is_retryable
from knightcode._session.messages import convert_to_llm
from knightcode._session.serialization import serialize_conversation
from knightcode._session.tokens import estimate_text_tokens
from knightcode._types.messages import (
    AssistantMessage,
    LlmMessage,
    Usage,
    thinking_level_of,
)

if TYPE_CHECKING:
    from knightcode._llm.types import Context, Model, StreamOptions
    from knightcode._types.messages import AgentMessage
    from knightcode._types.stream import AssistantMessageEvent

__all__ = [
    "COMPACTION_PROMPT",
    "MIN_SUMMARY_TOKENS",
    "SUMMARIZATION_SYSTEM_PROMPT",
    "UPDATE_PROMPT",
    "ModelStreamer",
    "SummarizationAborted",
    "SummarizationError",
    "SummaryResult",
    "build_summary_prompt",
    "estimate_request_tokens",
    "generate_summary",
    "generate_summary_with_usage",
    "output_budget",
    "request_summary",
]

SUMMARIZATION_SYSTEM_PROMPT = (
    "You write summaries of conversations between a user and an AI coding assistant. "
    "Reply with the summary you are asked for and nothing else: do not continue the "
    "conversation, do not answer questions found in it, and do not call tools."
)

_SECTIONS = """## Goal
[{goal}]

## Constraints & Preferences
- [{constraints}]

## Progress
### Done
- [x] [{done}]

### In Progress
- [ ] [{progress}]

### Blocked
- [{blocked}]

## Key Decisions
- **[Decision]**: [{decisions}]

## Next Steps
1. [{next}]

## Critical Context
- [{critical}]"""

COMPACTION_PROMPT = (
    "Summarize the conversation in the <conversation> tags as a checkpoint from which another "
    "model will carry on the work without seeing the conversation. Answer with exactly this "
    "markdown structure, every heading included:\n\n"
    + _SECTIONS.format(
        goal="What the user wants to achieve; list each goal if there are several",
        constraints='Requirements, limits and preferences the user stated, or "(none)"',
        done="Tasks and changes that are finished",
        progress="Work that is under way",
        blocked='What stands in the way, or "(none)"',
        decisions="Why it was chosen",
        next="What to do next, in order",
        critical='Facts, values, commands and references needed to continue, or "(none)"',
    )
    + "\n\nKeep every section short. Copy file paths, function names, commands and error "
    "messages exactly."
)
"""Instructions for a first summary."""

UPDATE_PROMPT = (
    "The <previous-summary> tags hold a checkpoint of the earlier conversation; the "
    "<conversation> tags hold the messages that came after it. Write the updated checkpoint:\n"
    "- keep everything from the previous summary that is still true;\n"
    "- add the new goals, progress, decisions and context;\n"
    '- move finished items from "In Progress" to "Done" and rewrite "Next Steps";\n'
    "- drop what no longer matters;\n"
    "- copy file paths, function names, commands and error messages exactly.\n\n"
    "Answer with exactly this markdown structure, every heading included:\n\n"
    + _SECTIONS.format(
        goal="The goals so far, including new ones",
        constraints="Every requirement and preference still in force",
        done="Earlier finished items and the newly finished ones",
        progress="Work that is under way now",
        blocked='What stands in the way now, or "(none)"',
        decisions="Why it was chosen (earlier decisions kept)",
        next="What to do next, in order",
        critical='Facts, values, commands and references needed to continue, or "(none)"',
    )
    + "\n\nKeep every section short."
)
"""Instructions for folding new messages into a previous summary."""

MIN_SUMMARY_TOKENS = 1024
"""Smallest output budget worth asking for; below it the request is considered not to fit."""


class ModelStreamer(Protocol):
    """What sends the request: a :class:`~knightcode._llm.registry.ModelRegistry` or a stand-in."""

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]: ...


@dataclass(frozen=True)
class SummaryResult:
    """A generated summary.

    :ivar text: the summary (the response's text blocks, joined by newlines)
    :ivar usage: the request's token usage and cost
    :ivar message: the whole assistant response
    """

    text: str
    usage: Usage
    message: AssistantMessage


class SummarizationError(KnightcodeError):
    """The summary request failed; ``response`` is the failed assistant message, if any.

    ``does_not_fit`` marks a request that was not sent because its input leaves no room for
    the summary in the model's context window.
    """

    def __init__(
        self, text: str, response: AssistantMessage | None = None, *, does_not_fit: bool = False
    ) -> None:
        super().__init__(text)
        self.response = response
        self.does_not_fit = does_not_fit

    @property
    def retryable(self) -> bool:
        """Whether waiting and trying again may help (rate limits, 5xx, dropped connections)."""
        return self.response is not None and is_retryable(self.response)

    @property
    def overflow(self) -> bool:
        """Whether the request did not (or would not) fit the model's context window."""
        return self.does_not_fit or (
            self.response is not None and is_context_overflow(self.response)
        )


class SummarizationAborted(SummarizationError, Aborted):
    """The request was aborted through its signal (an :class:`~knightcode._abort.Aborted`)."""


def build_summary_prompt(
    conversation_text: str,
    *,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
    instructions: str | None = None,
    length_limit_tokens: int | None = None,
) -> str:
    """The user message of a summary request.

    :param instructions: replaces the default instructions (:data:`COMPACTION_PROMPT`, or
        :data:`UPDATE_PROMPT` with a previous summary)
    :param custom_instructions: appended as ``Additional focus: …`` (``/compact <text>``)
    :param length_limit_tokens: asks the model to stay under this many tokens
    """
    text = f"<conversation>\n{conversation_text}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    text += instructions or (UPDATE_PROMPT if previous_summary else COMPACTION_PROMPT)
    if length_limit_tokens:
        text += f"\n\nKeep the whole summary under {length_limit_tokens} tokens."
    if custom_instructions:
        text += f"\n\nAdditional focus: {custom_instructions}"
    return text


def estimate_request_tokens(system_prompt: str, prompt_text: str) -> int:
    """Estimated input tokens of a request: characters / 4 plus 10 %, because code and
    non-English text tokenize denser than the heuristic assumes, plus a little framing.
    """
    tokens = estimate_text_tokens(system_prompt) + estimate_text_tokens(prompt_text)
    return tokens + tokens // 10 + 16


def output_budget(model: Model, input_tokens: int) -> int:
    """The model's output limit, reduced so input plus output fit its context window (may be
    zero or negative when the input alone does not fit).
    """
    return min(model.max_tokens, model.context_window - input_tokens)


async def request_summary(
    prompt_text: str,
    model: Model,
    models: ModelStreamer,
    *,
    system_prompt: str = SUMMARIZATION_SYSTEM_PROMPT,
    signal: AbortSignal | None = None,
    thinking_level: str | None = "high",
    max_tokens: int | None = None,
) -> SummaryResult:
    """Send one summary request and return its text.

    :param max_tokens: a lower output limit than the budget :func:`output_budget` allows
    :raises SummarizationError: the input does not fit, or the provider reported an error
    :raises SummarizationAborted: ``signal`` was set
    """
    from knightcode._llm.types import Context, StreamOptions

    budget = output_budget(model, estimate_request_tokens(system_prompt, prompt_text))
    if budget < min(MIN_SUMMARY_TOKENS, model.max_tokens):
        raise SummarizationError(
            f"the text to summarize does not fit the context window of {model.ref} "
            f"({model.context_window} tokens)",
            does_not_fit=True,
        )
    level = thinking_level_of(thinking_level) if model.reasoning else None
    options = StreamOptions(
        signal=signal,
        max_tokens=min(budget, max_tokens) if max_tokens else budget,
        reasoning=None if level == "off" else level,
        cache_retention="none",
    )
    user: LlmMessage = {
        "role": "user",
        "content": [{"type": "text", "text": prompt_text}],
        "timestamp": 0,
    }
    context = Context(system_prompt=system_prompt, messages=[user])
    final: AssistantMessage | None = None
    async for event in models.stream(model, context, options):
        if event["type"] == "done":
            final = event["message"]
        elif event["type"] == "error":
            failed = event["error"]
            # .get: a plugin's stream reaches here unchecked, and may leave fields out.
            if event.get("reason") == "aborted" or failed.get("stopReason") == "aborted":
                raise SummarizationAborted("Summarization aborted", failed)
            text = failed.get("errorMessage") or "unknown error"
            raise SummarizationError(f"Summarization failed: {text}", failed)
    if final is None:
        raise SummarizationError("Summarization failed: the stream ended without a response")
    blocks = final.get("content") or []
    text = "\n".join(str(block.get("text", "")) for block in blocks if block.get("type") == "text")
    return SummaryResult(text, final["usage"], final)


async def generate_summary_with_usage(
    messages: Sequence[AgentMessage],
    model: Model,
    models: ModelStreamer,
    *,
    custom_instructions: str | None = None,
    previous_summary: str | None = None,
    instructions: str | None = None,
    signal: AbortSignal | None = None,
    thinking_level: str | None = "high",
    max_tokens: int | None = None,
) -> SummaryResult:
    """Summarize agent messages (any roles) with one request; see the module docstring.

    ``previous_summary`` switches to the update instructions, so the new summary folds the
    messages into it.

    :raises SummarizationError: the request failed or does not fit the model's window
    :raises SummarizationAborted: ``signal`` was set
    """
    text = serialize_conversation(convert_to_llm(list(messages)))
    prompt = build_summary_prompt(
        text,
        previous_summary=previous_summary,
        custom_instructions=custom_instructions,
        instructions=instructions,
    )
    return await request_summary(
        prompt, model, models, signal=signal, thinking_level=thinking_level, max_tokens=max_tokens
    )


async def generate_summary(
    messages: Sequence[AgentMessage],
    model: Model,
    models: ModelStreamer,
    *,
    custom_instructions: str | None = None,
    previous_summary: str | None = None,
    instructions: str | None = None,
    signal: AbortSignal | None = None,
    thinking_level: str | None = "high",
    max_tokens: int | None = None,
) -> str:
    """Like :func:`generate_summary_with_usage`, returning only the summary text."""
    result = await generate_summary_with_usage(
        messages,
        model,
        models,
        custom_instructions=custom_instructions,
        previous_summary=previous_summary,
        instructions=instructions,
        signal=signal,
        thinking_level=thinking_level,
        max_tokens=max_tokens,
    )
    return result.text
